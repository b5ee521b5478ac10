"""The words of a label and how common each is.

A label has no spaces, so its words are guessed by `wordninja` (an English segmenter by dynamic
programming over Wikipedia word frequencies): "voicemail" → voice, mail. How common a word is
comes from `wordfreq` on the Zipf scale (log10 of occurrences per billion words: 7 for "the",
5 for "voice", 3 for "oboe", 0 for a word it has never seen), in English and the six other
languages of the biggest domain markets after it. A label's language is the one in which the
whole label, or else its words, is most common.

Both word lists load on first use (about half a second; the English list is the large one, the
others the small one, which stops at Zipf 3), never at import, so commands that do not appraise
do not pay for it. Lookups are plain dictionary reads, cached per label.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from functools import lru_cache

LANGUAGES: tuple[str, ...] = ("en", "es", "de", "fr", "pt", "it", "nl")
_ENGLISH = "en"
_TABLES: dict[str, dict[str, float]] = {}
_LOCK = threading.Lock()
# Zipf values are cached per label: the cache bounds a long-lived process's memory
_CACHE_SIZE = 262_144


def _tables() -> dict[str, dict[str, float]]:
    if len(_TABLES) == len(LANGUAGES):
        return _TABLES
    with _LOCK:
        if len(_TABLES) != len(LANGUAGES):
            from wordfreq import get_frequency_dict  # noqa: PLC0415 - loaded on first use

            for language in LANGUAGES:
                size = "large" if language == _ENGLISH else "small"
                _TABLES[language] = get_frequency_dict(language, size)
    return _TABLES


def zipf(word: str, language: str) -> float:
    """The Zipf frequency of `word` (lower case) in `language`; 0 for an unknown word."""
    frequency = _tables()[language].get(word, 0.0)
    return math.log10(frequency) + 9.0 if frequency > 0 else 0.0


@lru_cache(maxsize=_CACHE_SIZE)
def best_zipf(word: str) -> tuple[float, str]:
    """The highest Zipf frequency of `word` over LANGUAGES, and that language ("" if none)."""
    best, language = 0.0, ""
    for candidate in LANGUAGES:
        value = zipf(word, candidate)
        if value > best:
            best, language = value, candidate
    return best, language


@lru_cache(maxsize=_CACHE_SIZE)
def segments(label: str) -> tuple[str, ...]:
    """The label's parts: words by `wordninja` within each hyphen-separated part, digit runs
    kept whole ("best-4you" → best, 4, you)."""
    import wordninja  # noqa: PLC0415 - loaded on first use

    parts: list[str] = []
    for piece in label.split("-"):
        if piece:
            parts.extend(part.lower() for part in wordninja.split(piece) or [piece])
    return tuple(parts)


@dataclass(frozen=True)
class LabelWords:
    """What the word lists say about one label."""

    words: tuple[str, ...]  # the segments that are all letters
    word_zipfs: tuple[float, ...]  # their best Zipf frequency, in order
    label_zipf: float  # the whole label's best Zipf (0 when it is no word)
    label_english_zipf: float
    language: str  # the label's language, "" when neither it nor its words are known


@lru_cache(maxsize=_CACHE_SIZE)
def label_words(label: str) -> LabelWords:
    """Segment `label` and look each word up (see the module docstring)."""
    if label.startswith("xn--"):
        return LabelWords((), (), 0.0, 0.0, "")
    whole = label.replace("-", "")
    label_zipf, language = best_zipf(whole) if whole.isalpha() else (0.0, "")
    english = zipf(whole, _ENGLISH) if whole.isalpha() else 0.0
    words = tuple(part for part in segments(label) if part.isalpha())
    # A lone letter is a frequent token in any language and says nothing of the name
    zipfs = tuple(best_zipf(word)[0] if len(word) > 1 else 0.0 for word in words)
    if not language and words:
        votes: dict[str, float] = {}
        for word in words:
            value, word_language = best_zipf(word)
            if word_language:
                votes[word_language] = votes.get(word_language, 0.0) + value
        language = max(votes, key=lambda key: votes[key]) if votes else ""
    return LabelWords(words, zipfs, label_zipf, english, language)


def clear_caches() -> None:
    """Forget every cached label (benchmarks measure a cold process this way)."""
    best_zipf.cache_clear()
    segments.cache_clear()
    label_words.cache_clear()
