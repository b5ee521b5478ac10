"""The four signal formulas, with hand-computed expected values."""

from __future__ import annotations

import pytest

from dominus.domain_names import split_domain
from dominus.providers.models import ExpiryFacts, KeywordStats
from dominus.scoring.commercial import commercial_score
from dominus.scoring.config import ScoringConfig
from dominus.scoring.expiry import expiry_score
from dominus.scoring.intrinsic import (
    character_penalty,
    intrinsic_score,
    length_score,
    pronounceability,
)

CONFIG = ScoringConfig()


@pytest.mark.parametrize(
    ("domain", "expected"),
    [
        ("cloudnest.com", ("cloudnest", "com")),
        ("Shop.CO.UK", ("shop", "co.uk")),
        ("example.com.", ("example", "com")),
        ("localhost", ("localhost", "")),
    ],
)
def test_split_domain(domain: str, expected: tuple[str, str]) -> None:
    assert split_domain(domain) == expected


@pytest.mark.parametrize(
    ("length", "expected"),
    [(1, 1.0), (7, 1.0), (8, 12 / 13), (13, 7 / 13), (20, 0.0), (25, 0.0)],
)
def test_length_score(length: int, expected: float) -> None:
    assert length_score(length, CONFIG) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("hyphens", "digits", "expected"),
    [(0, 0, 1.0), (1, 0, 0.75), (0, 1, 0.85), (1, 2, 0.45), (4, 0, 0.0), (2, 5, 0.0)],
)
def test_character_penalty(hyphens: int, digits: int, expected: float) -> None:
    assert character_penalty(hyphens, digits, CONFIG) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("cloudnest", 3 / 9 * 1.8),  # clusters cl, dn, st: none longer than 3
        ("sky", 1 / 3 * 1.8),  # final y is a vowel
        ("yoga", 2 / 4 * 1.8),  # y before a vowel is a consonant
        ("strength", 1 / 8 * 1.8),  # str = 3, ng|th = 2 units: no cluster penalty
        ("aaaa", 1.0),  # 1.8 clamped to 1
        ("zzqxjkwp", 0.0),  # no vowels, cluster 8: clamped to 0
        ("1234", 0.0),  # no letters at all
        ("schmidt", 1 / 7 * 1.8 - 0.0),  # sch|m = 3 units (s, ch, m): still free
        ("angstrom", 2 / 8 * 1.8 - 0.2),  # ng|s|t|r = 4 units: one over the free length
    ],
)
def test_pronounceability(label: str, expected: float) -> None:
    assert pronounceability(label, CONFIG) == pytest.approx(expected)


def test_digraphs_are_configurable() -> None:
    # without digraphs "ngth" is a 4-consonant cluster: 0.225 − 0.2
    assert pronounceability("strength", ScoringConfig(digraphs=())) == pytest.approx(0.025)


@pytest.mark.parametrize(
    ("domain", "expected"),
    [
        ("cloudnest.com", (0.3 * 11 / 13 + 0.35 + 0.35 * 0.6) * 1.0),
        ("go.ai", (0.3 + 0.35 + 0.35 * 0.9) * 0.9),
        ("a1-b2.io", (0.3 + 0.35 * 0.45 + 0.35 * 0.9) * 0.85),
        ("strength.net", (0.3 * 12 / 13 + 0.35 + 0.35 * 0.225) * 0.65),
        ("sky.xyz", (0.3 + 0.35 + 0.35 * 0.6) * 0.4),
        ("yoga.co", (0.3 + 0.35 + 0.35 * 0.9) * 0.75),
        ("shop.co.uk", (0.3 + 0.35 + 0.35 * 0.45) * 0.45),  # multi-label suffix: unknown
        ("shop.zz", (0.3 + 0.35 + 0.35 * 0.45) * 0.45),
        ("shop.org", (0.3 + 0.35 + 0.35 * 0.45) * 0.55),
        ("shop.dev", (0.3 + 0.35 + 0.35 * 0.45) * 0.5),
        ("1234.com", 0.3 + 0.35 * 0.4),
        ("zzqxjkwp-99.xyz", (0.3 * 9 / 13 + 0.35 * 0.45) * 0.4),
    ],
)
def test_intrinsic_score(domain: str, expected: float) -> None:
    assert intrinsic_score(domain, CONFIG) == pytest.approx(expected)


def test_a_listed_multi_label_suffix_uses_its_own_multiplier() -> None:
    config = ScoringConfig(tld_multipliers=(("co.uk", 0.6),))
    assert intrinsic_score("shop.co.uk", config) == pytest.approx(0.8075 * 0.6)
    assert intrinsic_score("shop.com", config) == pytest.approx(0.8075 * 0.45)  # not listed


# log10(1 + 1,000,000) = 6.000000434 and log10(1 + 50) = 1.707570176 (the caps' denominators)
@pytest.mark.parametrize(
    ("keyword", "expected"),
    [
        (None, None),
        (KeywordStats("x", 0, 0.0), None),
        (KeywordStats("x", -5, -1.0), None),
        # below 1,000 searches and no CPC: not keyword evidence, so no signal
        (KeywordStats("x", 999, 0.0), None),
        (KeywordStats("x", 10_000, float("nan")), 0.6 * 4.000043 / 6.000000),  # NaN CPC is 0
        (KeywordStats("x", 1_000_000, 50.0), 1.0),
        (KeywordStats("x", 2_000_000, 100.0), 1.0),  # capped
        # the example: 0.6 × log10(33,101)/6 + 0.4 × log10(2.25)/log10(51)
        # = 0.6 × 4.519841/6.000000 + 0.4 × 0.352183/1.707570 = 0.451984 + 0.082499 = 0.534483
        (KeywordStats("x", 33_100, 1.25), 0.534483),
        # exactly the minimum volume: 0.6 × log10(1,001)/6 = 0.6 × 3.000434/6 = 0.300043
        (KeywordStats("x", 1000, 0.0), 0.300043),
        # a CPC alone is evidence: 0.4 × log10(3)/log10(51) = 0.4 × 0.477121/1.707570 = 0.111767
        (KeywordStats("x", 10, 2.0), 0.6 * 1.041393 / 6.0 + 0.111767),
        (KeywordStats("x", 0, 2.0), 0.111767),
    ],
)
def test_commercial_score(keyword: KeywordStats | None, expected: float | None) -> None:
    result = commercial_score(keyword, CONFIG)
    if expected is None:
        assert result is None
    else:
        assert result == pytest.approx(expected, abs=2e-6)


def test_real_keyword_data_moves_the_commercial_signal() -> None:
    """33,100 searches and $1.25 a click scored 0.03 on the linear scale."""
    real = commercial_score(KeywordStats("home gym", 33_100, 1.25), CONFIG)
    bigger = commercial_score(KeywordStats("car insurance", 246_000, 22.0), CONFIG)
    assert real is not None and bigger is not None
    assert real > 0.5
    assert bigger > real


def test_minimum_search_volume_is_configurable() -> None:
    config = ScoringConfig(min_search_volume=5000)
    assert commercial_score(KeywordStats("x", 4999, 0.0), config) is None
    assert commercial_score(KeywordStats("x", 5000, 0.0), config) is not None


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        (None, None),
        (ExpiryFacts(), None),  # a closeout row without facts is not expiry evidence
        (ExpiryFacts(age_years=10, backlinks=500, wayback_snapshots=250), 0.2 + 0.2 + 0.1),
        (ExpiryFacts(age_years=40, backlinks=5000, wayback_snapshots=1000), 1.0),
        (ExpiryFacts(backlinks=1000), 0.4),
        (ExpiryFacts(age_years=5, wayback_snapshots=50), 0.1 + 0.02),
        (ExpiryFacts(age_years=-3, backlinks=-1), None),
        (ExpiryFacts(age_years=0, backlinks=0, wayback_snapshots=1), 0.2 / 500),
    ],
)
def test_expiry_score(facts: ExpiryFacts | None, expected: float | None) -> None:
    result = expiry_score(facts, CONFIG)
    if expected is None:
        assert result is None
    else:
        assert result == pytest.approx(expected)
