"""Contributions in words: what each group of the model's terms is, for one name."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from dominus.valuation.features import name_features
from dominus.valuation.tlds import split_domain
from dominus.valuation.words import label_words

if TYPE_CHECKING:
    from dominus.valuation.comparables import UsedComparable
    from dominus.valuation.model import TldMarket

LANGUAGE_NAMES = {
    "en": "English",
    "es": "Spanish",
    "de": "German",
    "fr": "French",
    "pt": "Portuguese",
    "it": "Italian",
    "nl": "Dutch",
}
PATTERNS = ("LL", "LLL", "LLLL", "LLLLL", "NN", "NNN", "NNNN", "NNNNN", "NNNNNN")


def describe(group: str, domain: str, market: TldMarket, used: Sequence[UsedComparable]) -> str:
    """The contribution group `group` of the model, said of `domain`."""
    label, tld = split_domain(domain)
    features = name_features(domain)
    if group == "tld":
        count, _ = market.tlds.get(tld, (0, 0.0))
        typical = math.exp(market.market(tld)[0])
        return f".{tld} market: typical sale ${typical:,.0f} ({count:,} sales seen)"
    if group == "comparables":
        prices = [comparable.price for comparable in used]
        return (
            f"comparable sales: {len(used)} (median ${statistics.median(prices):,.0f}), "
            f"nearest {used[0].domain}"
        )
    texts: dict[str, Callable[[], str]] = {
        "length": lambda: f"length: {len(label)} characters",
        "characters": lambda: "characters: " + _characters(features),
        "pattern": lambda: "pattern: " + _pattern(features),
        "sound": lambda: (
            f"sound: {features.get('vowel_share', 0.0):.0%} vowels, consonant run "
            f"{int(features.get('consonant_run', 0.0))}"
        ),
        "words": lambda: "words: " + _words(label),
        "language": lambda: "language: " + _language(features),
        "venue": lambda: "retail (end-user) market rather than investors'",
    }
    text = texts.get(group)
    return text() if text else group


def _language(features: dict[str, float]) -> str:
    return next(
        (name for code, name in LANGUAGE_NAMES.items() if features.get(f"language_{code}")),
        "none recognised",
    )


def _characters(features: dict[str, float]) -> str:
    if features.get("all_digits"):
        return "digits only"
    text = "letters and digits" if features.get("letters_and_digits") else "letters only"
    hyphens = int(features.get("hyphens", 0.0))
    if hyphens:
        text += f", {hyphens} hyphen{'s' if hyphens > 1 else ''}"
    return text


def _pattern(features: dict[str, float]) -> str:
    found = [name for name in PATTERNS if features.get(f"pattern_{name}")]
    if features.get("pattern_CVCV") or features.get("pattern_CVCVC"):
        found.append("consonant-vowel alternation")
    if features.get("repeated_character"):
        found.append("a repeated character")
    return ", ".join(found) or "none"


def _words(label: str) -> str:
    found = label_words(label)
    if found.label_zipf >= 1.0:
        return f"'{label}' is a word (Zipf {found.label_zipf:.1f})"
    shown = [
        f"{word} ({value:.1f})"
        for word, value in zip(found.words, found.word_zipfs, strict=True)
        if len(word) > 1
    ][:4]
    return ", ".join(shown) if shown else "no known word"
