"""The words in a second-level label, for matching comparable sales.

A label has no spaces, so its words are guessed by a word segmenter: `wordninja` (MIT licence),
which splits text by dynamic programming over the word frequencies of English Wikipedia it ships
with (offline, no download). "homeowl" → home, owl; "homework" → homework; "xqzvbrt" → letters.

A token counts for matching when it has at least `min_length` letters (3 by default: "owl" and
"gym" are words, "at" and "my" join anything), is all letters (digit runs are not words) and is
not a function word (`FUNCTION_WORDS`: "the", "and", "for", ...), which would relate names that
share nothing but grammar. Punycode labels (`xn--…`) have no tokens: the segmenter reads English,
and an A-label's ASCII form is an encoding, not words.

The segmenter is loaded on first use (about 0.25 s), not at import, so commands that never score
do not pay for it. Results are cached: a worker scores the same comparable sales run after run.
"""

from __future__ import annotations

from dominus.valuation.words import segments

FUNCTION_WORDS = frozenset(
    {"and", "are", "but", "for", "from", "how", "its", "not", "our", "the", "this", "that"}
    | {"was", "who", "with", "you", "your"}
)


def _segments(label: str) -> tuple[str, ...]:
    # The value model's segmentation, and its cache: a name and its comparable sales are split
    # once per process for the scoring and the valuation alike.
    return segments(label)


def word_tokens(label: str, min_length: int = 3) -> frozenset[str]:
    """The matching words of `label` (a lower-case second-level label, hyphens allowed)."""
    if label.startswith("xn--"):
        return frozenset()
    return frozenset(
        token
        for token in _segments(label)
        if len(token) >= min_length and token.isalpha() and token not in FUNCTION_WORDS
    )


def clear_word_cache() -> None:
    """Forget every segmented label (benchmarks measure a fresh process this way)."""
    segments.cache_clear()
