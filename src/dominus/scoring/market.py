"""The market signal, from comparable sales.

Each usable sale gets a recency weight by calendar age relative to `today` (the caller's date —
the clock is never read here): ≤ 1 year 1.0, ≤ 2 years 0.7, ≤ 5 years 0.4, older 0.2. The bounds
are inclusive: a sale on 2024-03-10 is "1 year old" on 2025-03-10 and still weighs 1.0 (a 29 Feb
sale's anniversary in a common year is 28 Feb). Sales dated after `today` weigh 1.0.

    median  = recency-weighted median price
    market  = clamp((median − 500) / (10,000 − 500))
    density = 0.7·min(1, n / 20) + 0.3·min(1, Σ weights of the 10 most recent sales / 5)

The weighted median is the price where the cumulative weight (prices ascending) first exceeds half
the total; when it lands exactly on half, the mean of that price and the next one (so with equal
weights it is the ordinary median).

Only sales in `config.currency` (case-insensitive) are used — prices are never converted; the others
are counted in `ignored_currency`. Sales with a price that is not a finite number > 0 are dropped
and counted in `ignored_invalid`. No usable sale → the signal is unavailable (score None).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from dominus.providers.models import ComparableSale
from dominus.scoring.config import ScoringConfig
from dominus.scoring.intrinsic import clamp
from dominus.scoring.names import split_domain


@dataclass(frozen=True)
class MarketResult:
    score: float | None  # None: no usable sale
    median: float | None
    density: float  # 0 without usable sales
    sales: int  # usable sales (right currency, valid price)
    ignored_currency: int
    ignored_invalid: int


def years_before(today: date, years: int) -> date:
    """The same calendar day `years` earlier (29 Feb → 28 Feb in a common year)."""
    try:
        return today.replace(year=today.year - years)
    except ValueError:
        return today.replace(year=today.year - years, day=28)


def recency_weight(sale_date: date, today: date, config: ScoringConfig) -> float:
    for years, weight in config.recency_brackets:
        if sale_date >= years_before(today, years):
            return weight
    return config.recency_older_weight


def weighted_median(pairs: Iterable[tuple[float, float]]) -> float:
    """Weighted median of (value, weight) pairs; weights must be > 0 and the input non-empty."""
    ordered = sorted(pairs)
    if not ordered:
        raise ValueError("weighted_median of no values")
    half = sum(weight for _, weight in ordered) / 2
    cumulative = 0.0
    for index, (value, weight) in enumerate(ordered):
        cumulative += weight
        if math.isclose(cumulative, half, rel_tol=1e-9) and index + 1 < len(ordered):
            return (value + ordered[index + 1][0]) / 2
        if cumulative > half:
            return value
    return ordered[-1][0]  # only reachable through rounding on the last element


def market_signal(
    sales: Sequence[ComparableSale], today: date, config: ScoringConfig
) -> MarketResult:
    currency = config.currency.strip().upper()
    usable: list[tuple[ComparableSale, float]] = []
    ignored_currency = ignored_invalid = 0
    # the bracket boundaries depend only on today: compute them once, not per sale
    boundaries = [(years_before(today, y), w) for y, w in config.recency_brackets]
    for sale in sales:
        if sale.currency.strip().upper() != currency:
            ignored_currency += 1
            continue
        if not math.isfinite(sale.price) or sale.price <= 0:
            ignored_invalid += 1
            continue
        weight = next(
            (w for bound, w in boundaries if sale.sale_date >= bound),
            config.recency_older_weight,
        )
        usable.append((sale, weight))
    if not usable:
        return MarketResult(None, None, 0.0, 0, ignored_currency, ignored_invalid)

    # a zero recency weight (configurable) must not break the median: fall back to equal weights
    positive = [(s.price, w) for s, w in usable if w > 0] or [(s.price, 1.0) for s, _ in usable]
    median = weighted_median(positive)
    score = clamp((median - config.market_floor) / (config.market_ceiling - config.market_floor))
    recent = sorted(usable, key=lambda pair: pair[0].sale_date, reverse=True)
    recent_weight = sum(w for _, w in recent[: config.density_recent_count])
    density = config.density_count_share * min(
        1.0, len(usable) / config.density_count_cap
    ) + config.density_recent_share * min(1.0, recent_weight / config.density_recent_weight_cap)
    return MarketResult(score, median, density, len(usable), ignored_currency, ignored_invalid)


def _affix_key(label: str) -> str:
    return label.replace("-", "")


def relevant_comparables(
    domain: str, sales: Iterable[ComparableSale], *, min_shared: int = 4
) -> list[ComparableSale]:
    """The sales that inform a candidate's market signal, in input order.

    A sale is relevant when it has the same public suffix (whole, so .co.uk ≠ .uk) and either
      - the two labels (hyphens removed) start with the same `min_shared` (4) letters or more
        ("cloudnest" ~ "cloudbase") or end with them ("cloudnest" ~ "birdnest"), or
      - they share a hyphen-separated token of ≥ 3 characters ("best-shoes" ~ "shoes-online").
    Compound names carry their keyword at one end, and a shared 4-letter affix is rarer than a
    shared 3-letter one ("pro…", "…ing"), which keeps the rule conservative without a dictionary.
    The candidate's own earlier sale (same label) is relevant.
    """
    label, suffix = split_domain(domain)
    key = _affix_key(label)
    tokens = {t for t in label.split("-") if len(t) >= 3}
    chosen: list[ComparableSale] = []
    for sale in sales:
        sold_label, sold_suffix = split_domain(sale.domain)
        if sold_suffix != suffix or not sold_label:
            continue
        sold_key = _affix_key(sold_label)
        if (
            len(key) >= min_shared
            and len(sold_key) >= min_shared
            and (
                key[:min_shared] == sold_key[:min_shared]
                or key[-min_shared:] == sold_key[-min_shared:]
            )
        ) or tokens.intersection(sold_label.split("-")):
            chosen.append(sale)
    return chosen


class ComparablesIndex:
    """`relevant_comparables` for many candidates against one (possibly large) list of sales:
    the sales are indexed once by suffix and affix/token, so each candidate looks at the few
    sales that can match instead of all of them. Same answer, same order."""

    def __init__(self, sales: Iterable[ComparableSale], *, min_shared: int = 4) -> None:
        self.sales = list(sales)
        self.min_shared = min_shared
        self._by_key: dict[tuple[str, str, str], list[int]] = {}
        for position, sale in enumerate(self.sales):
            label, suffix = split_domain(sale.domain)
            if label:
                for key in self._keys(label, suffix):
                    self._by_key.setdefault(key, []).append(position)

    def relevant(self, domain: str) -> list[ComparableSale]:
        label, suffix = split_domain(domain)
        positions: set[int] = set()
        for key in self._keys(label, suffix):
            positions.update(self._by_key.get(key, ()))
        return [self.sales[position] for position in sorted(positions)]

    def _keys(self, label: str, suffix: str) -> set[tuple[str, str, str]]:
        keys = {(suffix, "token", token) for token in label.split("-") if len(token) >= 3}
        affix = _affix_key(label)
        if len(affix) >= self.min_shared:
            keys.add((suffix, "start", affix[: self.min_shared]))
            keys.add((suffix, "end", affix[-self.min_shared :]))
        return keys
