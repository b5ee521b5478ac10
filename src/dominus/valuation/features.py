"""A name's features: what the value model reads from the name alone.

`name_features(domain)` gives a dict of named numbers (absent means 0). The model's own inputs
(the TLD's market learned from sales, the venue class, the comparable sales) are added by
model.py; everything here depends on the name only, so it is computed once per name.

Groups (the explanation of an appraisal speaks in these, see `GROUPS`):
  length      one indicator per length bucket (1, 2, ..., 9–10, 11–13, 14+) and the length
  characters  letters only / digits only / both, hyphens, the share of digits
  pattern     short patterns that trade as a class: LL, LLL, LLLL, LLLLL, NN … NNNNNN, CVCV
              (consonant-vowel alternation: "ramo", "kiva"), repeated characters, lucky and
              unlucky digits (8 and 4: numeric names sell mostly to Chinese buyers)
  sound       vowel share, the longest consonant run, rare letters (q, x, z, j), no vowel at all
  words       how many words, how much of the label they cover, their Zipf frequencies
  word        the whole label as a word: its Zipf frequency in buckets, one word / two common words
  language    the label's language when it is a word or made of words
  tld         the TLD group (the TLD's own learned market term is the model's)
  and interactions of the strongest of these with .com and with the tech country codes.
"""

from __future__ import annotations

import re
from functools import lru_cache

from dominus.valuation.patterns import pattern_features
from dominus.valuation.tlds import TldGroup, split_domain, tld_group
from dominus.valuation.words import LANGUAGES, label_words

VOWELS = frozenset("aeiouy")
RARE_LETTERS = frozenset("qxzj")
_LENGTH_BUCKETS: tuple[tuple[str, int, int], ...] = (
    ("len_1", 1, 1),
    ("len_2", 2, 2),
    ("len_3", 3, 3),
    ("len_4", 4, 4),
    ("len_5", 5, 5),
    ("len_6", 6, 6),
    ("len_7", 7, 7),
    ("len_8", 8, 8),
    ("len_9_10", 9, 10),
    ("len_11_13", 11, 13),
    ("len_14_plus", 14, 10_000),
)
_ZIPF_BUCKETS: tuple[tuple[str, float, float], ...] = (
    ("word_zipf_5_plus", 5.0, 99.0),
    ("word_zipf_4_5", 4.0, 5.0),
    ("word_zipf_3_4", 3.0, 4.0),
    ("word_zipf_2_3", 2.0, 3.0),
)
_CVCV = re.compile(r"^(?:[^aeiouy][aeiouy]){2}$")
_CVCVC = re.compile(r"^[^aeiouy][aeiouy][^aeiouy][aeiouy][^aeiouy]$")
_CONSONANT_RUNS = re.compile(r"[bcdfghjklmnpqrstvwxz]+")
_REPEAT = re.compile(r"(.)\1")
WORD_THRESHOLD = 3.0  # a Zipf of 3 is about one use per million words: a real word

FEATURE_NAMES: tuple[str, ...] = (
    *(name for name, _, _ in _LENGTH_BUCKETS),
    "length",
    "all_letters",
    "all_digits",
    "letters_and_digits",
    "hyphens",
    "digit_share",
    "pattern_LL",
    "pattern_LLL",
    "pattern_LLLL",
    "pattern_LLLLL",
    "pattern_NN",
    "pattern_NNN",
    "pattern_NNNN",
    "pattern_NNNNN",
    "pattern_NNNNNN",
    "pattern_CVCV",
    "pattern_CVCVC",
    "repeated_character",
    "digit_8_share",
    "has_digit_4",
    "digit_lucky_share",
    "digit_leading_zero",
    "digit_count_4",
    "digit_distinct_share",
    "year",
    "chinese_premium_letters",
    "mirrored",
    "run_3_plus",
    "pinyin",
    "pinyin_syllables",
    "vowel_share",
    "consonant_run",
    "rare_letters",
    "no_vowel",
    "words",
    "word_coverage",
    "word_zipf_min",
    "word_zipf_mean",
    "word_zipf_max",
    "fragments",
    *(name for name, _, _ in _ZIPF_BUCKETS),
    "label_zipf",
    "label_english",
    "one_word",
    "two_common_words",
    "plural",
    *(f"language_{language}" for language in LANGUAGES),
    *(f"tld_{group.value}" for group in TldGroup),
    "com_x_label_zipf",
    "com_x_short",
    "com_x_one_word",
    "com_x_two_common_words",
    "com_x_word_zipf_mean",
    "com_x_length",
    "tech_x_short",
    "tech_x_label_zipf",
    "cctld_x_label_zipf",
    "com_x_all_digits",
    "com_x_pinyin",
    "com_x_chinese_premium_letters",
    "net_org_x_label_zipf",
    "net_org_x_length",
    "tech_x_length",
    "cctld_x_length",
    "new_gtld_x_length",
    "new_gtld_x_label_zipf",
)

_PATTERN_EXTRAS = frozenset(
    {
        "repeated_character",
        "digit_8_share",
        "has_digit_4",
        "digit_lucky_share",
        "digit_leading_zero",
        "digit_count_4",
        "digit_distinct_share",
        "year",
        "chinese_premium_letters",
        "mirrored",
        "run_3_plus",
        "pinyin",
        "pinyin_syllables",
    }
)
# Feature name → the group an explanation names it by.
GROUPS: dict[str, str] = {}
for _name in FEATURE_NAMES:
    if _name.startswith("len") or _name == "length":
        GROUPS[_name] = "length"
    elif _name.startswith("pattern") or _name in _PATTERN_EXTRAS:
        GROUPS[_name] = "pattern"
    elif _name in {"all_letters", "all_digits", "letters_and_digits", "hyphens", "digit_share"}:
        GROUPS[_name] = "characters"
    elif _name in {"vowel_share", "consonant_run", "rare_letters", "no_vowel"}:
        GROUPS[_name] = "sound"
    elif _name.startswith("language"):
        GROUPS[_name] = "language"
    elif _name.startswith("tld_") or "_x_" in _name:
        GROUPS[_name] = "tld"
    else:
        GROUPS[_name] = "words"


@lru_cache(maxsize=262_144)
def name_features(domain: str) -> dict[str, float]:
    """The features of `domain` (see the module docstring). Cached: names repeat."""
    label, tld = split_domain(domain)
    features: dict[str, float] = {}
    _length(label, features)
    _characters(label, features)
    _sound(label, features)
    _words(label, features)
    features.update(pattern_features(label, is_word=features["one_word"] > 0))
    _tld(label, tld, features)
    return features


def _length(label: str, features: dict[str, float]) -> None:
    size = len(label)
    for name, low, high in _LENGTH_BUCKETS:
        if low <= size <= high:
            features[name] = 1.0
    features["length"] = float(min(size, 30))


def _characters(label: str, features: dict[str, float]) -> None:
    size = max(len(label), 1)
    letters = sum(char.isalpha() for char in label)
    digits = sum(char.isdigit() for char in label)
    hyphens = label.count("-")
    features["all_letters"] = float(letters == len(label) and letters > 0)
    features["all_digits"] = float(digits == len(label) and digits > 0)
    features["letters_and_digits"] = float(letters > 0 and digits > 0)
    features["hyphens"] = float(min(hyphens, 3))
    features["digit_share"] = digits / size
    if features["all_letters"] and 2 <= len(label) <= 5:
        features[f"pattern_{'L' * len(label)}"] = 1.0
    if features["all_digits"] and 2 <= len(label) <= 6:
        features[f"pattern_{'N' * len(label)}"] = 1.0
    if _CVCV.match(label):
        features["pattern_CVCV"] = 1.0
    if _CVCVC.match(label):
        features["pattern_CVCVC"] = 1.0
    if _REPEAT.search(label):
        features["repeated_character"] = 1.0
    if digits:
        features["digit_8_share"] = label.count("8") / digits
        features["has_digit_4"] = float("4" in label)


def _sound(label: str, features: dict[str, float]) -> None:
    letters = [char for char in label if char.isalpha()]
    if not letters:
        return
    vowels = sum(char in VOWELS for char in letters)
    features["vowel_share"] = vowels / len(letters)
    runs = _CONSONANT_RUNS.findall(label)
    features["consonant_run"] = float(min(max((len(run) for run in runs), default=0), 6))
    features["rare_letters"] = float(min(sum(char in RARE_LETTERS for char in letters), 3))
    features["no_vowel"] = float(vowels == 0)


def _words(label: str, features: dict[str, float]) -> None:
    found = label_words(label)
    zipfs = found.word_zipfs
    real = [
        (word, value)
        for word, value in zip(found.words, zipfs, strict=True)
        if value >= WORD_THRESHOLD and (len(word) >= 2 or word in {"a", "i"})
    ]
    letters = max(sum(char.isalpha() for char in label), 1)
    features["words"] = float(min(len(found.words), 6))
    features["word_coverage"] = min(sum(len(word) for word, _ in real) / letters, 1.0)
    features["fragments"] = float(min(len(found.words) - len(real), 4))
    if zipfs:
        features["word_zipf_min"] = min(zipfs)
        features["word_zipf_mean"] = sum(zipfs) / len(zipfs)
        features["word_zipf_max"] = max(zipfs)
    label_zipf = found.label_zipf if len(label) >= 3 else 0.0
    features["label_zipf"] = label_zipf
    for name, low, high in _ZIPF_BUCKETS:
        if low <= label_zipf < high:
            features[name] = 1.0
    features["label_english"] = float(found.label_english_zipf >= WORD_THRESHOLD)
    one_word = label_zipf >= WORD_THRESHOLD
    features["one_word"] = float(one_word)
    two = len(found.words) == 2 and len(real) == 2 and min(zipfs) >= 3.5
    features["two_common_words"] = float(two and not one_word)
    if label.endswith("s") and len(label) > 3:
        singular = label_words(label[:-1]).label_zipf
        features["plural"] = float(singular >= WORD_THRESHOLD and singular > label_zipf)
    if found.language and (one_word or features["word_coverage"] >= 0.8):
        features[f"language_{found.language}"] = 1.0


def _tld(label: str, tld: str, features: dict[str, float]) -> None:
    group = tld_group(tld)
    features[f"tld_{group.value}"] = 1.0
    short = float(len(label) <= 4)
    if group is TldGroup.COM:
        features["com_x_label_zipf"] = features["label_zipf"]
        features["com_x_short"] = short
        features["com_x_one_word"] = features["one_word"]
        features["com_x_two_common_words"] = features["two_common_words"]
        features["com_x_word_zipf_mean"] = features.get("word_zipf_mean", 0.0)
        features["com_x_length"] = features["length"]
        features["com_x_all_digits"] = features["all_digits"]
        features["com_x_pinyin"] = features.get("pinyin", 0.0)
        features["com_x_chinese_premium_letters"] = features.get("chinese_premium_letters", 0.0)
    elif group is TldGroup.NET_ORG:
        features["net_org_x_label_zipf"] = features["label_zipf"]
        features["net_org_x_length"] = features["length"]
    elif group is TldGroup.TECH:
        features["tech_x_short"] = short
        features["tech_x_label_zipf"] = features["label_zipf"]
        features["tech_x_length"] = features["length"]
    elif group is TldGroup.CCTLD:
        features["cctld_x_label_zipf"] = features["label_zipf"]
        features["cctld_x_length"] = features["length"]
    elif group is TldGroup.NEW_GTLD:
        features["new_gtld_x_length"] = features["length"]
        features["new_gtld_x_label_zipf"] = features["label_zipf"]


def feature_row(domain: str) -> list[float]:
    """`name_features(domain)` in FEATURE_NAMES order."""
    features = name_features(domain)
    return [features.get(name, 0.0) for name in FEATURE_NAMES]
