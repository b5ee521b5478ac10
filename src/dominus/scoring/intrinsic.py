"""The intrinsic signal: what the name itself is worth, with no outside data.

    length    = 1                            if len ≤ 7
              = max(0, 1 − (len − 7) / 13)   otherwise
    penalty   = max(0, 1 − 0.25·hyphens − 0.15·digits)
    pronounce = clamp(vowelRatio·1.8 − max(0, (maxCluster − 3)·0.2))
    intrinsic = clamp(0.3·length + 0.35·penalty + 0.35·pronounce) × TLD multiplier

`len`, hyphens and digits are counted on the second-level label as given (ASCII / punycode, so an
`xn--` label pays for its two hyphens: IDNs resell worse, and we cannot judge their sound).
vowelRatio = vowels / letters (digits and hyphens are not letters). `y` is a vowel when it is not
followed by a vowel (sky, gym) and a consonant otherwise (yoga, beyond). maxCluster is the longest
run of consonants, a configured digraph (th, sh, ...) counting as one. A label with no letters has
pronounceability 0. Constants come from `ScoringConfig`.
"""

from __future__ import annotations

from dominus.domain_names import split_domain
from dominus.scoring.config import ScoringConfig

_VOWELS = frozenset("aeiou")


def clamp(value: float, low: float = 0.0, high: float = 1.0) -> float:
    return low if value < low else high if value > high else value


def length_score(length: int, config: ScoringConfig) -> float:
    if length <= config.length_full_score_max:
        return 1.0
    return max(0.0, 1.0 - (length - config.length_full_score_max) / config.length_zero_span)


def character_penalty(hyphens: int, digits: int, config: ScoringConfig) -> float:
    return max(0.0, 1.0 - config.hyphen_penalty * hyphens - config.digit_penalty * digits)


def _is_vowel(letters: str, index: int) -> bool:
    char = letters[index]
    if char in _VOWELS:
        return True
    if char == "y":
        # "" (end of label) is not in _VOWELS either: a final y is a vowel
        return letters[index + 1 : index + 2] not in _VOWELS
    return False


def pronounceability(label: str, config: ScoringConfig) -> float:
    """clamp(vowelRatio·factor − max(0, (maxCluster − free)·penalty)); see the module docstring."""
    label = label.lower()
    letters = sum(1 for c in label if "a" <= c <= "z")
    if letters == 0:
        return 0.0
    vowels = 0
    max_cluster = 0
    cluster = 0
    digraphs = config.digraph_set
    i = 0
    n = len(label)
    while i < n:
        char = label[i]
        if not "a" <= char <= "z":
            cluster = 0  # digits and hyphens break a consonant run
            i += 1
            continue
        if _is_vowel(label, i):
            vowels += 1
            cluster = 0
            i += 1
            continue
        # a consonant: a digraph that starts here is one unit (its second letter is a consonant
        # in every configured digraph, so skipping it cannot hide a vowel)
        step = 2 if label[i : i + 2] in digraphs else 1
        cluster += 1
        max_cluster = max(max_cluster, cluster)
        i += step
    ratio = vowels / letters
    excess = max(0.0, (max_cluster - config.cluster_free_length) * config.cluster_penalty)
    return clamp(ratio * config.vowel_ratio_factor - excess)


def intrinsic_score(domain: str, config: ScoringConfig) -> float:
    """The intrinsic signal in [0, 1] for a normalised name such as `cloudnest.com`."""
    label, suffix = split_domain(domain)
    hyphens = label.count("-")
    digits = sum(1 for c in label if c.isdigit())
    raw = (
        config.length_share * length_score(len(label), config)
        + config.penalty_share * character_penalty(hyphens, digits, config)
        + config.pronounceability_share * pronounceability(label, config)
    )
    return clamp(raw) * config.tld_multiplier(suffix)
