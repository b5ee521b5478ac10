"""The comparable-sales evidence: the past sales nearest to a name, and why.

A past sale is a candidate comparable when it shares a word with the name (the words of
words.py, 3 letters or more, not a function word), has the same label under another TLD, or,
for a short name without words (up to 6 characters), has the same shape under a TLD of the same
group ("LLLL" for four letters, "NNN" for three digits, "LNLN"...). Its similarity to the name is

    match × TLD × length, each in (0, 1]:
      match   1 for the same label; the Jaccard share of words (shared ÷ all words of either);
              0.6 for the same short shape
      TLD     1 for the same TLD, 0.6 for another of the same group, 0.3 otherwise
      length  exp(−|difference in length| ÷ 6)

and its weight is similarity × recency, recency halving every `half_life_years` (a sale dated
after the day of the appraisal is not "past" and is never used). The `k` heaviest above
`MIN_SIMILARITY` are the name's comparables, each with its similarity and a reason in words.

The index is built once over any number of sales (posting lists per word, label and shape; each
list keeps its `MAX_POSTINGS` newest sales, so a very common word costs no more than a rare one)
and serves many names. `ComparablesIndex.residuals` holds, per sale, how far the sale's price
was above or below the value model's own appraisal of that name (set by model.py): the model
reads comparables as that residual, so a comparable tells what the name's words and shape are
worth beyond what the model already sees, rather than re-pricing the name from scratch.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TypeVar

from dominus.valuation.sales import Sale
from dominus.valuation.tlds import split_domain, tld_group
from dominus.valuation.words import segments

FUNCTION_WORDS = frozenset(
    {"and", "are", "but", "for", "from", "how", "its", "not", "our", "the", "this", "that"}
    | {"was", "who", "with", "you", "your", "all", "get", "one", "can", "out", "now", "pro"}
)
Key = TypeVar("Key", str, tuple[str, str])
MIN_WORD = 3
MAX_SHAPE_LENGTH = 6
MAX_POSTINGS = 150
MIN_SIMILARITY = 0.15
SHAPE_MATCH = 0.6
SAME_GROUP = 0.6
OTHER_TLD = 0.3
LENGTH_SCALE = 6.0
DAYS_A_YEAR = 365.25


@dataclass(frozen=True)
class UsedComparable:
    """A past sale used as evidence for an appraisal."""

    domain: str
    price: float
    date: date
    venue: str
    similarity: float  # in (0, 1]
    weight: float  # similarity × recency
    why: str

    def to_dict(self) -> dict[str, object]:
        return {
            "domain": self.domain,
            "price": round(self.price, 2),
            "date": self.date.isoformat(),
            "venue": self.venue,
            "similarity": round(self.similarity, 3),
            "why": self.why,
        }


@dataclass(frozen=True)
class _Name:
    label: str
    tld: str
    group: str
    words: frozenset[str]
    shape: str | None


def match_words(label: str) -> frozenset[str]:
    """The words of `label` that relate names (see the module docstring)."""
    if label.startswith("xn--"):
        return frozenset()
    return frozenset(
        word
        for word in segments(label)
        if len(word) >= MIN_WORD and word.isalpha() and word not in FUNCTION_WORDS
    )


def shape_of(label: str) -> str | None:
    """ "LLLL", "NNN", "LNLN"... for a short label without words; None otherwise."""
    if len(label) > MAX_SHAPE_LENGTH or not label.isalnum():
        return None
    return "".join("N" if char.isdigit() else "L" for char in label)


def _name(domain: str) -> _Name:
    label, tld = split_domain(domain)
    words = match_words(label)
    shape = shape_of(label)
    return _Name(label, tld, tld_group(tld).value, words, shape)


class ComparablesIndex:
    """Past sales indexed once for many appraisals (see the module docstring)."""

    def __init__(self, sales: Iterable[Sale], *, half_life_years: float = 3.0, k: int = 5) -> None:
        self.sales: list[Sale] = list(sales)
        self.half_life_years = half_life_years
        self.k = k
        self.residuals: list[float] | None = None
        self.residuals_of: str | None = None  # which model computed them
        self._names = [_name(sale.domain) for sale in self.sales]
        self._ordinals = [sale.date.toordinal() for sale in self.sales]
        self._log_prices = [math.log(sale.price) for sale in self.sales]
        newest_first = sorted(
            range(len(self.sales)), key=lambda position: -self._ordinals[position]
        )
        self._by_word: dict[str, list[int]] = {}
        self._by_label: dict[str, list[int]] = {}
        self._by_shape: dict[tuple[str, str], list[int]] = {}
        for position in newest_first:
            name = self._names[position]
            for word in name.words:
                _post(self._by_word, word, position)
            _post(self._by_label, name.label, position)
            if name.shape is not None:
                _post(self._by_shape, (name.group, name.shape), position)

    def __len__(self) -> int:
        return len(self.sales)

    def log_price(self, position: int) -> float:
        return self._log_prices[position]

    def nearest(
        self,
        domain: str,
        today: date,
        *,
        exclude: int | None = None,
        k: int | None = None,
    ) -> list[tuple[int, float, float]]:
        """The comparables of `domain` on `today`: (position, similarity, weight), heaviest
        first. `exclude` leaves one sale out (the sale being fitted)."""
        name = _name(domain)
        names = self._names
        found: dict[int, float] = {}
        words = name.words
        for word in words:
            for position in self._by_word.get(word, ()):
                if position not in found:
                    theirs = names[position].words
                    shared = len(words & theirs)
                    found[position] = shared / len(words | theirs) if shared else 0.0
        for position in self._by_label.get(name.label, ()):
            found[position] = 1.0
        if name.shape is not None:
            for position in self._by_shape.get((name.group, name.shape), ()):
                found.setdefault(position, SHAPE_MATCH)
        today_ordinal = today.toordinal()
        ordinals = self._ordinals
        size = len(name.label)
        half_life_days = self.half_life_years * DAYS_A_YEAR
        scored: list[tuple[float, int, float]] = []
        for position, match in found.items():
            if position == exclude or ordinals[position] > today_ordinal:
                continue
            other = names[position]
            tld = (
                1.0
                if other.tld == name.tld
                else SAME_GROUP
                if other.group == name.group
                else OTHER_TLD
            )
            similarity = match * tld * math.exp(-abs(size - len(other.label)) / LENGTH_SCALE)
            if similarity < MIN_SIMILARITY:
                continue
            weight = similarity * 0.5 ** ((today_ordinal - ordinals[position]) / half_life_days)
            scored.append((weight, position, similarity))
        best = heapq.nsmallest(k or self.k, scored, key=lambda item: (-item[0], item[1]))
        return [(position, similarity, weight) for weight, position, similarity in best]

    def used(self, domain: str, found: Sequence[tuple[int, float, float]]) -> list[UsedComparable]:
        """The comparables as an appraisal reports them, each with its reason."""
        name = _name(domain)
        used = []
        for position, similarity, weight in found:
            sale = self.sales[position]
            used.append(
                UsedComparable(
                    domain=sale.domain,
                    price=sale.price,
                    date=sale.date,
                    venue=sale.venue,
                    similarity=similarity,
                    weight=weight,
                    why=self._why(name, self._names[position]),
                )
            )
        return used

    @staticmethod
    def _why(name: _Name, other: _Name) -> str:
        if name.label == other.label:
            reason = "the same name" if name.tld == other.tld else f"the same label in .{other.tld}"
            return reason
        shared = sorted(name.words & other.words)
        if shared:
            reason = "shares " + ", ".join(f"'{word}'" for word in shared)
        else:
            reason = f"the same shape {other.shape}"
        if name.tld == other.tld:
            return f"{reason}, same .{other.tld}"
        return f"{reason}, in .{other.tld}"


def _post(index: dict[Key, list[int]], key: Key, position: int) -> None:
    postings = index.setdefault(key, [])
    if len(postings) < MAX_POSTINGS:
        postings.append(position)
