"""Which comparable sales bear on a candidate, and how much.

A sale is relevant to a candidate when both hold:
  - the TLDs are comparable: the same public suffix (whole: .co.uk is not .uk), or both in
    `comparable_tlds` (.com, .net and .org by default, the legacy generic TLDs that trade against
    each other). A sale from the other TLD of the group counts at `cross_tld_price_factor` (0.5)
    of its price, in both directions: conservative, since .com prices overstate .net/.org names
    and the discount is only a rough exchange rate between them;
  - the labels share a word (see words.py), or are the same label (the name's own earlier sale,
    which also covers labels with no words, such as IDNs). A shared prefix is not enough:
    "homework" and "homeinsure" share four letters and no word.

Its overlap is the share of the candidate's words it shares (1 for the same label): "homeowl" and
"homeinsure" share "home", half of the candidate's two words. Overlap × recency weighs the sale
in the market statistic (market.py).

`ComparablesIndex` serves many candidates from one list of sales (the pipeline: 10,000 candidates,
up to 50,000 sales). It tokenises each sale once and indexes it by (suffix, word) and (suffix,
label); a candidate then counts its shared words per sale from the few posting lists it touches
(`collections.Counter`, in C) and ranks only those sales. `market_signal` is the same index over
any list, so the pipeline and a single appraisal take one code path.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from dominus.domain_names import split_domain
from dominus.providers.models import ComparableSale
from dominus.scoring.config import ScoringConfig
from dominus.scoring.market import MarketResult, Recency, UsedSale, market_result
from dominus.scoring.words import word_tokens


@dataclass(frozen=True)
class Match:
    """How one relevant sale relates to the candidate."""

    shared_words: tuple[str, ...]  # sorted
    overlap: float  # in (0, 1]
    tld_factor: float  # 1 for the same suffix, cross_tld_price_factor for a comparable one


@dataclass(frozen=True)
class Candidate:
    """A candidate name as the matching sees it (computed once per candidate)."""

    label: str
    suffix: str
    words: frozenset[str]

    @classmethod
    def of(cls, domain: str, config: ScoringConfig) -> Candidate:
        label, suffix = split_domain(domain)
        return cls(label, suffix, word_tokens(label, config.min_token_length))


def tld_factor(candidate_suffix: str, sale_suffix: str, config: ScoringConfig) -> float:
    """1 for the same suffix, the cross-TLD factor within the comparable group, else 0."""
    if candidate_suffix == sale_suffix:
        return 1.0
    group = config.comparable_tld_set
    if candidate_suffix in group and sale_suffix in group:
        return config.cross_tld_price_factor
    return 0.0


def match(candidate: Candidate, sale: ComparableSale, config: ScoringConfig) -> Match | None:
    """How `sale` bears on `candidate`, or None when it is not relevant (the plain rule)."""
    label, suffix = split_domain(sale.domain)
    factor = tld_factor(candidate.suffix, suffix, config)
    if not label or factor <= 0:
        return None
    if label == candidate.label:
        return Match(tuple(sorted(candidate.words)), 1.0, factor)
    shared = candidate.words & word_tokens(label, config.min_token_length)
    if not shared:
        return None
    return Match(tuple(sorted(shared)), len(shared) / len(candidate.words), factor)


def relevant_comparables(
    domain: str, sales: Iterable[ComparableSale], config: ScoringConfig | None = None
) -> list[ComparableSale]:
    """The relevant sales for `domain`, in input order (the plain rule, sale by sale)."""
    config = config or ScoringConfig()
    candidate = Candidate.of(domain, config)
    return [sale for sale in sales if match(candidate, sale, config) is not None]


def market_signal(
    domain: str, sales: Sequence[ComparableSale], today: date, config: ScoringConfig
) -> MarketResult:
    """The market signal of `domain` from `sales` (any list: irrelevant sales are skipped)."""
    return ComparablesIndex(sales, config).market(domain, today)


class ComparablesIndex:
    """Comparable sales indexed once for many candidates (see the module docstring)."""

    def __init__(
        self, sales: Iterable[ComparableSale], config: ScoringConfig | None = None
    ) -> None:
        self.sales = list(sales)
        self.config = config or ScoringConfig()
        currency = self.config.currency.strip().upper()
        self._words: list[frozenset[str]] = []
        self._ordinals = [sale.sale_date.toordinal() for sale in self.sales]
        # per sale: 0 usable, 1 another currency, 2 an invalid price (currency checked first)
        self._problem = [
            1
            if sale.currency.strip().upper() != currency
            else 0
            if math.isfinite(sale.price) and sale.price > 0
            else 2
            for sale in self.sales
        ]
        self._by_word: dict[tuple[str, str], list[int]] = {}
        self._by_label: dict[tuple[str, str], list[int]] = {}
        for position, sale in enumerate(self.sales):
            label, suffix = split_domain(sale.domain)
            words = word_tokens(label, self.config.min_token_length) if label else frozenset()
            self._words.append(words)
            if not label:
                continue
            self._by_label.setdefault((suffix, label), []).append(position)
            for word in words:
                self._by_word.setdefault((suffix, word), []).append(position)
        self._recency: tuple[date, list[float]] | None = None

    def relevant(self, domain: str) -> list[ComparableSale]:
        """The relevant sales for `domain`, in input order: the same as relevant_comparables."""
        hits = self._hits(Candidate.of(domain, self.config))
        return [self.sales[position] for position in sorted(hits)]

    def market(self, domain: str, today: date) -> MarketResult:
        """The market signal of `domain`: the same as market_signal over all the sales."""
        candidate = Candidate.of(domain, self.config)
        hits = self._hits(candidate)
        recency = self._recency_weights(today)
        words = len(candidate.words)
        # Weights take a few values (recency brackets × shared-word counts): bucket the usable
        # sales by weight and rank by date and name only inside the buckets that are needed.
        buckets: dict[float, list[int]] = {}
        ignored = [0, 0, 0]
        for position, (shared, _) in hits.items():
            problem = self._problem[position]
            ignored[problem] += 1
            if problem == 0:
                weight = recency[position] * (shared / words if shared else 1.0)
                buckets.setdefault(weight, []).append(position)
        chosen: list[int] = []
        for weight in sorted(buckets, reverse=True):
            room = self.config.max_comparables - len(chosen)
            if room <= 0:
                break
            chosen += heapq.nsmallest(room, buckets[weight], key=self._newest_first)
        used = [self._used(candidate, position, hits[position], recency) for position in chosen]
        return market_result(used, ignored[0], ignored[1], ignored[2], self.config)

    def _newest_first(self, position: int) -> tuple[int, str, int]:
        return (-self._ordinals[position], self.sales[position].domain, position)

    def _hits(self, candidate: Candidate) -> dict[int, tuple[int, float]]:
        """position → (shared words, TLD factor) for every relevant sale. The same label shares
        every word (0 when the label has none, e.g. an IDN: overlap 1 all the same)."""
        hits: dict[int, tuple[int, float]] = {}
        for suffix, factor in self._comparable_suffixes(candidate.suffix):
            counts: Counter[int] = Counter()
            for word in candidate.words:
                counts.update(self._by_word.get((suffix, word), ()))
            for position, shared in counts.items():
                hits[position] = (shared, factor)
            for position in self._by_label.get((suffix, candidate.label), ()):
                hits[position] = (len(candidate.words), factor)
        return hits

    def _comparable_suffixes(self, suffix: str) -> list[tuple[str, float]]:
        factor = self.config.cross_tld_price_factor
        group = self.config.comparable_tld_set
        others = sorted(group - {suffix}) if suffix in group and factor > 0 else []
        return [(suffix, 1.0)] + [(other, factor) for other in others]

    def _recency_weights(self, today: date) -> list[float]:
        """Every sale's recency weight for `today`, computed once per day asked."""
        if self._recency is None or self._recency[0] != today:
            recency = Recency(today, self.config)
            self._recency = (today, [recency.weight(ordinal) for ordinal in self._ordinals])
        return self._recency[1]

    def _used(
        self,
        candidate: Candidate,
        position: int,
        hit: tuple[int, float],
        recency: list[float],
    ) -> UsedSale:
        sale = self.sales[position]
        shared, factor = hit
        overlap = shared / len(candidate.words) if shared else 1.0
        return UsedSale(
            domain=sale.domain,
            price=sale.price,
            adjusted_price=sale.price * factor,
            currency=sale.currency,
            sale_date=sale.sale_date,
            recency=recency[position],
            overlap=overlap,
            shared_words=tuple(sorted(candidate.words & self._words[position])),
            weight=recency[position] * overlap,
        )
