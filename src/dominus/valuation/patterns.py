"""Label patterns that trade as a class in the investor market, most of them to Chinese buyers.

A month of marketplace sales is dominated by expired-name auctions where short numeric and
letter names (NNN, NNNN, LLL, LLLL .com) and pinyin words change hands among Chinese investors.
What they pay for follows rules that a word list does not see:

- digits: 8, 6 and 9 are lucky, 4 sounds like "death" and 0 at the start reads badly;
  a repeated digit (8888), a mirror (1221) or a pair of pairs (1122, 1212) is dearer; a year
  (1992, 2024) is a name of its own;
- letters: a short all-letter label without the vowels and v (the "Chinese premium" letters:
  Chinese initials have no vowels, and v is not a pinyin initial) reads as an abbreviation of
  pinyin words;
- pinyin: a label made wholly of pinyin syllables ("haoche", "tianxia") is a Chinese word or
  phrase, whether or not an English word list knows it.

`pattern_features(label)` gives these as named numbers (absent means 0).
"""

from __future__ import annotations

from functools import lru_cache
from itertools import pairwise

LUCKY_DIGITS = frozenset("689")
CHINESE_PREMIUM_LETTERS = frozenset("bcdfghjklmnpqrstwxyz")  # no vowels, no v
_INITIALS = tuple(
    [
        "zh",
        "ch",
        "sh",
        "b",
        "p",
        "m",
        "f",
        "d",
        "t",
        "n",
        "l",
        "g",
        "k",
        "h",
        "j",
        "q",
        "x",
        "r",
        "z",
        "c",
        "s",
        "y",
        "w",
    ]
)
_FINALS = tuple(
    [
        "a",
        "o",
        "e",
        "i",
        "u",
        "v",
        "ai",
        "ei",
        "ao",
        "ou",
        "an",
        "en",
        "ang",
        "eng",
        "ong",
        "er",
        "ia",
        "ie",
        "iao",
        "iu",
        "ian",
        "in",
        "iang",
        "ing",
        "iong",
        "ua",
        "uo",
        "uai",
        "ui",
        "uan",
        "un",
        "uang",
        "ue",
    ]
)
_ALONE = frozenset(
    ["a", "o", "e", "ai", "ei", "ao", "ou", "an", "en", "ang", "eng", "er"]
)  # syllables with no initial
MAX_SYLLABLES = 4


def _syllables() -> frozenset[str]:
    found = set(_ALONE)
    for initial in _INITIALS:
        for final in _FINALS:
            found.add(initial + final)
    return frozenset(found)


PINYIN_SYLLABLES = _syllables()
_LONGEST_SYLLABLE = max(len(syllable) for syllable in PINYIN_SYLLABLES)


@lru_cache(maxsize=65_536)
def pinyin_syllables(label: str) -> int:
    """The fewest pinyin syllables that spell `label` exactly; 0 when none do (or when it
    would take more than MAX_SYLLABLES)."""
    if not label.isalpha() or not label.isascii():
        return 0
    size = len(label)
    fewest = [0] + [MAX_SYLLABLES + 1] * size
    for end in range(1, size + 1):
        for start in range(max(0, end - _LONGEST_SYLLABLE), end):
            if label[start:end] in PINYIN_SYLLABLES and fewest[start] + 1 < fewest[end]:
                fewest[end] = fewest[start] + 1
    return fewest[size] if fewest[size] <= MAX_SYLLABLES else 0


def is_year(label: str) -> bool:
    return len(label) == 4 and label.isdigit() and 1900 <= int(label) <= 2039


def is_mirrored(label: str) -> bool:
    """A palindrome (1221, abba) or a pair of pairs (1122, 1212): of 4 to 6 characters."""
    if not 4 <= len(label) <= 6:
        return False
    if label == label[::-1]:
        return True
    if len(label) == 4:
        return (label[0] == label[1] and label[2] == label[3]) or label[:2] == label[2:]
    return False


def longest_run(label: str) -> int:
    """The longest run of one character repeated (8888 → 4, book → 2)."""
    best = run = 1 if label else 0
    for previous, char in pairwise(label):
        run = run + 1 if char == previous else 1
        best = max(best, run)
    return best


def pattern_features(label: str, is_word: bool) -> dict[str, float]:
    """The features of the module docstring for `label` (`is_word`: a word list knows the whole
    label, which then is not read as pinyin)."""
    features: dict[str, float] = {}
    if label.isdigit():
        features["digit_lucky_share"] = sum(c in LUCKY_DIGITS for c in label) / len(label)
        features["digit_leading_zero"] = float(label[0] == "0")
        features["digit_count_4"] = float(min(label.count("4"), 3))
        features["digit_distinct_share"] = len(set(label)) / len(label)
        features["year"] = float(is_year(label))
    elif label.isalpha() and len(label) <= 5:
        features["chinese_premium_letters"] = float(set(label) <= CHINESE_PREMIUM_LETTERS)
    if label.isalnum():
        features["mirrored"] = float(is_mirrored(label))
        features["run_3_plus"] = float(longest_run(label) >= 3)
    syllables = 0 if is_word else pinyin_syllables(label)
    if syllables >= 2 or (syllables == 1 and len(label) >= 4):
        features["pinyin"] = 1.0
        features["pinyin_syllables"] = float(syllables)
    return features
