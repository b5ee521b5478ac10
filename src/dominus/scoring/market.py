"""The market signal, from relevant comparable sales (which are relevant, and finding them among
many: comparables.py).

Each relevant, usable sale is weighed by recency × overlap. Recency is by calendar age relative
to `today` (the caller's date; the clock is never read here): ≤ 1 year 1.0, ≤ 2 years 0.7,
≤ 5 years 0.4, older 0.2, bounds inclusive (a sale on 2024-03-10 is "1 year old" on 2025-03-10;
a 29 Feb sale's anniversary in a common year is 28 Feb; a sale dated after `today` weighs 1.0).
Its price is taken at its TLD factor (a comparable TLD's sale at half price).

Only the `max_comparables` (20) heaviest sales are used (ties: the newer first, then by name, then
in input order), so the list shown
with the candidate is every sale behind the figure. Market evidence needs at least
`min_comparables` (3) of them; with fewer there is no market signal, and the sales are listed
with the candidate (`evidence: false`) but move nothing: one lucky sale is an anecdote.

    statistic = weighted lower quartile of the prices (`market_quantile` 0.25): the smallest
                price whose cumulative weight (prices ascending) reaches a quarter of the total
    market    = clamp((statistic − 500) / (10,000 − 500))

The lower quartile, not the median, because a name is bought at the price a buyer will pay and
comparable lists are skewed upward by the few sales that make the news.

Only sales in `config.currency` (case-insensitive) are used; prices are never converted, the others
are counted in `ignored_currency`. A price that is not a finite number > 0 is counted in
`ignored_invalid`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from dominus.scoring.config import ScoringConfig
from dominus.scoring.intrinsic import clamp


@dataclass(frozen=True)
class UsedSale:
    """A relevant sale and how much it counts."""

    domain: str
    price: float  # as sold
    adjusted_price: float  # × the TLD factor
    currency: str
    sale_date: date
    recency: float
    overlap: float
    shared_words: tuple[str, ...]
    weight: float  # recency × overlap

    def to_dict(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "price": self.price,
            "adjusted_price": round(self.adjusted_price, 2),
            "currency": self.currency,
            "date": self.sale_date.isoformat(),
            "recency": self.recency,
            "overlap": self.overlap,
            "shared_words": list(self.shared_words),
            "weight": self.weight,
        }


@dataclass(frozen=True)
class MarketResult:
    score: float | None  # None: no market evidence
    statistic: float | None  # the weighted quantile; None without market evidence
    relevant: int  # relevant, usable sales (before the max_comparables cut)
    required: int  # min_comparables
    used: tuple[UsedSale, ...]  # the heaviest max_comparables of them
    ignored_currency: int
    ignored_invalid: int

    @property
    def evidence(self) -> bool:
        return self.score is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "evidence": self.evidence,
            "relevant_sales": self.relevant,
            "required": self.required,
            "statistic": self.statistic,
            "sales": [sale.to_dict() for sale in self.used],
            "ignored_currency": self.ignored_currency,
            "ignored_invalid": self.ignored_invalid,
        }


def years_before(today: date, years: int) -> date:
    """The same calendar day `years` earlier (29 Feb → 28 Feb in a common year)."""
    try:
        return today.replace(year=today.year - years)
    except ValueError:
        return today.replace(year=today.year - years, day=28)


def recency_weight(sale_date: date, today: date, config: ScoringConfig) -> float:
    return Recency(today, config).weight(sale_date.toordinal())


class Recency:
    """Recency weights for one `today`, the bracket boundaries computed once."""

    def __init__(self, today: date, config: ScoringConfig) -> None:
        self.today = today
        self._boundaries = [
            (years_before(today, years).toordinal(), weight)
            for years, weight in config.recency_brackets
        ]
        self._older = config.recency_older_weight

    def weight(self, sale_ordinal: int) -> float:
        for boundary, weight in self._boundaries:
            if sale_ordinal >= boundary:
                return weight
        return self._older


def weighted_quantile(pairs: Iterable[tuple[float, float]], quantile: float) -> float:
    """The smallest value whose cumulative weight (values ascending) reaches `quantile` of the
    total. Weights must be ≥ 0 and the input non-empty; with no positive weight, all count 1."""
    ordered = sorted(pairs)
    if not ordered:
        raise ValueError("weighted_quantile of no values")
    if not any(weight > 0 for _, weight in ordered):
        ordered = [(value, 1.0) for value, _ in ordered]
    target = quantile * sum(weight for _, weight in ordered)
    cumulative = 0.0
    for value, weight in ordered:
        cumulative += weight
        if cumulative >= target or math.isclose(cumulative, target, rel_tol=1e-9):
            return value
    return ordered[-1][0]  # only reachable through rounding


def market_result(
    used: Sequence[UsedSale],
    relevant: int,
    ignored_currency: int,
    ignored_invalid: int,
    config: ScoringConfig,
) -> MarketResult:
    """The market signal from the sales chosen to be used (the heaviest `max_comparables` of the
    `relevant` relevant, usable sales, heaviest first: comparables.py chooses them)."""
    statistic = score = None
    if len(used) >= config.min_comparables:
        statistic = weighted_quantile(
            ((sale.adjusted_price, sale.weight) for sale in used), config.market_quantile
        )
        score = clamp(
            (statistic - config.market_floor) / (config.market_ceiling - config.market_floor)
        )
    return MarketResult(
        score=score,
        statistic=statistic,
        relevant=relevant,
        required=config.min_comparables,
        used=tuple(used),
        ignored_currency=ignored_currency,
        ignored_invalid=ignored_invalid,
    )
