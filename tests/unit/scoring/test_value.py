"""The expected value: EV = weighted score × anchor, the anchor drawn from the evidence present
(value.py), and the cases that once misvalued names."""

from __future__ import annotations

from datetime import date

import pytest

from dominus.providers.models import ComparableSale, ExpiryFacts, KeywordStats
from dominus.scoring import ScoringConfig, ScoringInput, Weights, score_domain
from dominus.scoring.value import anchors

CONFIG = ScoringConfig()
SHARES = Weights()
TODAY = date(2026, 11, 30)


@pytest.mark.parametrize(
    ("market", "commercial", "expiry", "multiplier", "expected"),
    [
        # no evidence: the floor
        (None, None, None, 1.0, 500.0),
        # commercial only: 500 + 9,500 × 0.5 × 1 = 5,250
        (None, 0.5, None, 1.0, 5250.0),
        # the same in .xyz (multiplier 0.4): 500 + 9,500 × 0.5 × 0.4 = 2,400
        (None, 0.5, None, 0.4, 2400.0),
        # expiry only: 500 + 2,500 × 0.76 = 2,400
        (None, None, 0.76, 1.0, 2400.0),
        # market only: the statistic, at least the floor
        (3000.0, None, None, 1.0, 3000.0),
        (100.0, None, None, 1.0, 500.0),
        # market 3,000 and commercial 5,250, weighed 0.25 and 0.35:
        # (0.25 × 3,000 + 0.35 × 5,250) / 0.60 = (750 + 1,837.5) / 0.6 = 4,312.5
        (3000.0, 0.5, None, 1.0, 4312.5),
        # all three: (0.25 × 3,000 + 0.35 × 5,250 + 0.10 × 2,400) / 0.70
        # = (750 + 1,837.5 + 240) / 0.7 = 4,039.2857…
        (3000.0, 0.5, 0.76, 1.0, 2827.5 / 0.7),
    ],
)
def test_anchor(
    market: float | None,
    commercial: float | None,
    expiry: float | None,
    multiplier: float,
    expected: float,
) -> None:
    result = anchors(SHARES, market, commercial, expiry, multiplier, CONFIG)
    assert result.anchor == pytest.approx(expected)


def test_evidence_with_no_weight_has_no_say() -> None:
    no_market_weight = Weights(intrinsic=0.5, commercial=0.5, market=0, expiry=0)
    result = anchors(no_market_weight, 9000.0, None, None, 1.0, CONFIG)
    assert result.anchor == 500.0


def score(domain: str, **inputs: object) -> float:
    return score_domain(
        ScoringInput(domain, **inputs),  # type: ignore[arg-type]
        Weights(),
        CONFIG,
        TODAY,
    ).expected_value


HOME_INSURE = ComparableSale("homeinsure.com", 38_000, "USD", date(2019, 5, 17))


def test_one_sale_sharing_a_prefix_does_not_multiply_the_ev() -> None:
    """`homeinsure.com` ($38,000) multiplied a candidate's EV about 8×."""
    # shares a 4-letter prefix and no word: not even relevant
    assert score("homework.com", comparables=[HOME_INSURE]) == score("homework.com")
    # shares the word "home": relevant, but one sale is not market evidence (3 are needed)
    assert score("homeowl.com", comparables=[HOME_INSURE]) == score("homeowl.com")


def test_three_relevant_sales_move_the_ev_by_their_lower_quartile() -> None:
    sales = [
        HOME_INSURE,
        ComparableSale("homegarden.com", 2000, "USD", date(2025, 6, 1)),
        ComparableSale("smarthome.com", 2500, "USD", date(2026, 1, 10)),
    ]
    base = score("homeowl.com")
    with_market = score("homeowl.com", comparables=sales)
    # the $38,000 outlier is not what the EV stands on: the lower quartile is $2,000
    assert base < with_market < 2000


@pytest.mark.parametrize(
    "closeout",
    ["oldgardentools.com", "discount-auto-parts-online.com", "petcareblog.net"],
)
def test_an_aged_closeout_with_backlinks_is_valued_above_ok123(closeout: str) -> None:
    """A closeout with 18 years of age and 1,200 backlinks was valued below
    `ok123.com`."""
    facts = ExpiryFacts(age_years=18, backlinks=1200)
    assert score(closeout, expiry=facts) > score("ok123.com")


def test_a_real_keyword_raises_the_ev_above_the_floor() -> None:
    keyword = KeywordStats("home gym", 33_100, 1.25)
    assert score("homegym.com", keyword=keyword) > 500 > score("homegym.com")
    # the same keyword under a weaker TLD is worth less
    assert score("homegym.xyz", keyword=keyword) < score("homegym.com", keyword=keyword)
