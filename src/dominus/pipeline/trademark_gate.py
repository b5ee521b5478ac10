"""The trademark gate: a candidate that resembles a registered mark is never recommended.

Normalisation (marks and names alike): Unicode compatibility-decomposed with accents dropped
("Nestlé" → "nestle"), lower-cased, each digit spelled as an English word (0 → "zero" … 9 →
"nine", so "7-Eleven" and "seveneleven" meet), then everything but a–z removed ("Coca-Cola" →
"cocacola"). A mark that normalises to nothing is ignored.

Tokens of a name: its second-level label (the part before the first dot, TLD excluded), normalised
per hyphen-separated part, each non-empty part being a token, plus the whole label with the hyphens
removed ("best-coca-cola.com" → best, coca, cola, bestcocacola). Punycode labels are matched on
their ASCII form ("xn--…"), so an IDN that imitates a mark in its Unicode form is not caught here.

A name is BLOCKED when any mark matches any token by one of these rules, tried in this order:
    exact           token == mark                                   (marks of any length)
    substring       the mark occurs inside the token                (marks of ≥ 3 letters)
    edit_distance   Levenshtein(token, mark) ≤ 1                    (both ≥ 4 letters)
No marks source (None) → UNVERIFIED; a source with no marks (empty list) → CLEAR.

Speed: the gate is built once per run and checks ~10,000 names against thousands of marks, so
nothing is compared pairwise. Exact is a dict lookup; substring looks every substring of a token
(≥ 3 letters, up to the longest mark) up in that dict; edit distance uses a deletion-neighbourhood
index (each mark and its one-letter deletions → marks), then confirms the few candidates.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from dominus.providers.models import Mark

SUBSTRING_MIN_LENGTH = 3
EDIT_DISTANCE_MIN_LENGTH = 4

_DIGIT_WORDS = str.maketrans(
    {
        "0": "zero",
        "1": "one",
        "2": "two",
        "3": "three",
        "4": "four",
        "5": "five",
        "6": "six",
        "7": "seven",
        "8": "eight",
        "9": "nine",
    }
)
_NOT_LETTER = re.compile(r"[^a-z]+")


class TrademarkVerdict(StrEnum):
    CLEAR = "clear"
    BLOCKED = "blocked"
    UNVERIFIED = "unverified"  # no trademark source was available


@dataclass(frozen=True)
class GateResult:
    verdict: TrademarkVerdict
    matched_mark: str | None = None  # the mark as listed in the source (first spelling seen)
    rule: str | None = None  # "exact" | "substring" | "edit_distance"


def normalise_mark(text: str) -> str:
    """ "Coca-Cola" → "cocacola", "7-Eleven" → "seveneleven", "Nestlé" → "nestle"."""
    decomposed = unicodedata.normalize("NFKD", text)
    without_accents = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _NOT_LETTER.sub("", without_accents.lower().translate(_DIGIT_WORDS))


def name_tokens(domain: str) -> list[str]:
    """The tokens of a name, in order: hyphen parts, then the whole label (no duplicates)."""
    label = domain.strip().lower().split(".", 1)[0]
    parts = [normalise_mark(part) for part in label.split("-")]
    tokens = [part for part in parts if part]
    whole = "".join(tokens)
    if whole:
        tokens.append(whole)
    return list(dict.fromkeys(tokens))


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def within_one_edit(a: str, b: str) -> bool:
    """Levenshtein(a, b) ≤ 1, in one pass."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    # a is now the shorter (or equal) one; skip the common prefix, then the rests must agree
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return a[i + 1 :] == b[i + 1 :]  # one substitution at i (or none when i == len)
    return a[i:] == b[i + 1 :]  # one insertion into a at i


class TrademarkGate:
    """Built once from a marks source; `check()` is then cheap and pure."""

    def __init__(self, marks: Sequence[Mark] | None) -> None:
        self._available = marks is not None
        # normalised mark → the mark as listed (the first spelling wins, deterministically)
        self._marks: dict[str, str] = {}
        for mark in marks or ():
            key = normalise_mark(mark.mark)
            if key:
                self._marks.setdefault(key, mark.mark)
        self._substring_marks = frozenset(
            key for key in self._marks if len(key) >= SUBSTRING_MIN_LENGTH
        )
        self._longest = max((len(key) for key in self._substring_marks), default=0)
        self._near: dict[str, set[str]] = {}
        for key in self._marks:
            if len(key) >= EDIT_DISTANCE_MIN_LENGTH:
                for variant in _deletions(key) | {key}:
                    self._near.setdefault(variant, set()).add(key)

    @property
    def available(self) -> bool:
        return self._available

    def __len__(self) -> int:
        return len(self._marks)

    def check(self, domain: str) -> GateResult:
        """The verdict for one normalised name (`cloudnest.com`); see the module docstring."""
        if not self._available:
            return GateResult(TrademarkVerdict.UNVERIFIED)
        tokens = name_tokens(domain)
        for token in tokens:
            if token in self._marks:
                return self._blocked(token, "exact")
        for token in tokens:
            found = self._substring(token)
            if found is not None:
                return self._blocked(found, "substring")
        for token in tokens:
            found = self._near_match(token)
            if found is not None:
                return self._blocked(found, "edit_distance")
        return GateResult(TrademarkVerdict.CLEAR)

    def _blocked(self, key: str, rule: str) -> GateResult:
        return GateResult(TrademarkVerdict.BLOCKED, matched_mark=self._marks[key], rule=rule)

    def _substring(self, token: str) -> str | None:
        """The longest mark (≥ 3 letters) inside the token; ties → alphabetically first."""
        for length in range(min(len(token), self._longest), SUBSTRING_MIN_LENGTH - 1, -1):
            hits = {
                token[start : start + length]
                for start in range(len(token) - length + 1)
                if token[start : start + length] in self._substring_marks
            }
            if hits:
                return min(hits)
        return None

    def _near_match(self, token: str) -> str | None:
        """A mark within one edit of the token (both ≥ 4 letters); alphabetically first."""
        if len(token) < EDIT_DISTANCE_MIN_LENGTH:
            return None
        candidates: set[str] = set()
        for variant in _deletions(token) | {token}:
            candidates |= self._near.get(variant, set())
        # a shared deletion can also mean a transposition or two edits: confirm each
        confirmed = [mark for mark in candidates if within_one_edit(token, mark)]
        return min(confirmed) if confirmed else None
