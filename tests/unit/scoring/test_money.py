"""The money gate, from the issue's text:

    expected profit = EV × (1 − commission) × P(sale within years) − (registration + renewals)
    P(sale) = 1 − (1 − r)^years,  r = sell-through × confidence / 0.8
    buy max = min(EV × ratio − holding cost, absolute cap), never below 0

with the defaults (sell-through 0.01, commission 0.20, 3 years, ratio 0.02, cap 5,000) and the
bundled prices (.com 10.46, .io 50). Holding cost: hand registration = registration + renewal × 2;
purchase = listed price + renewal × 3; the buy max subtracts the holding cost without the seller's
price. Every expected figure is worked out by hand in the comments."""

from __future__ import annotations

from typing import Any

import pytest

from dominus.scoring import ScoringConfig
from dominus.scoring.money import NO_LISTED_PRICE, Acquisition, money, p_sale, sell_through_rate

CONFIG = ScoringConfig()
BUNDLED = CONFIG.prices.source


@pytest.mark.parametrize(
    ("acquisition", "ev", "confidence", "expected"),
    [
        # r = 0.01 × 0.8/0.8 = 0.01; P = 1 − 0.99³ = 1 − 0.970299 = 0.029701
        # revenue = 310 × 0.8 × 0.029701 = 7.365848; holding = 10.46 + 10.46 × 2 = 31.38
        # profit = 7.365848 − 31.38 = −24.01; buy max = max(0, 6.20 − 31.38) = 0
        (
            Acquisition("example.com"),
            310.0,
            0.8,
            {"p_sale": 0.029701, "revenue": 7.37, "holding": 31.38, "profit": -24.01, "max": 0},
        ),
        # r = 0.01 × 0.6/0.8 = 0.0075; P = 1 − 0.9925³ = 1 − 0.977668 = 0.022332
        # revenue = 5,000 × 0.8 × 0.022332 = 89.326688; profit = 89.33 − 31.38 = 57.95
        # buy max = 5,000 × 0.02 − 31.38 = 68.62
        (
            Acquisition("example.com"),
            5000.0,
            0.6,
            {"p_sale": 0.022332, "revenue": 89.33, "holding": 31.38, "profit": 57.95, "max": 68.62},
        ),
        # a purchase listed at $69: holding = 69 + 10.46 × 3 = 100.38; profit = 89.33 − 100.38
        # = −11.05; buy max = 100 − 31.38 (renewals only) = 68.62, below the asking price
        (
            Acquisition("example.com", purchase=True, listed_price=69.0),
            5000.0,
            0.6,
            {
                "p_sale": 0.022332,
                "revenue": 89.33,
                "holding": 100.38,
                "profit": -11.05,
                "max": 68.62,
            },
        ),
        # .io: holding = 50 + 50 × 2 = 150; revenue = 2,000 × 0.8 × 0.029701 = 47.52
        # profit = 47.5216 − 150 = −102.48; buy max = max(0, 40 − 150) = 0
        (
            Acquisition("example.io"),
            2000.0,
            0.8,
            {"p_sale": 0.029701, "revenue": 47.52, "holding": 150.0, "profit": -102.48, "max": 0},
        ),
        # a known renewal of 20 replaces the table's: holding = 10.46 + 20 × 2 = 50.46
        # profit = 89.33 − 50.46 = 38.87; buy max = 100 − 50.46 = 49.54
        (
            Acquisition("example.com", renewal_cost=20.0),
            5000.0,
            0.6,
            {"p_sale": 0.022332, "revenue": 89.33, "holding": 50.46, "profit": 38.87, "max": 49.54},
        ),
        # the absolute cap: 1,000,000 × 0.02 − 31.38 = 19,968.62 → 5,000
        (
            Acquisition("example.com"),
            1_000_000.0,
            0.8,
            {
                "p_sale": 0.029701,
                "revenue": 23760.8,
                "holding": 31.38,
                "profit": 23729.42,
                "max": 5000,
            },
        ),
    ],
)
def test_money_gate(
    acquisition: Acquisition, ev: float, confidence: float, expected: dict[str, float]
) -> None:
    result = money(acquisition, ev, confidence, CONFIG)
    assert result.p_sale == pytest.approx(expected["p_sale"], abs=5e-7)
    assert result.expected_revenue == pytest.approx(expected["revenue"])
    assert result.holding_cost == pytest.approx(expected["holding"])
    assert result.expected_profit == pytest.approx(expected["profit"])
    assert result.buy_max == pytest.approx(expected["max"])
    assert result.passes is (expected["profit"] > 0)
    assert result.problem is None


def test_sell_through_and_chance_of_sale() -> None:
    # r = 0.01 × 0.4/0.8 = 0.005; P(1 year) = r; P(3 years) = 1 − 0.995³ = 0.014925
    assert sell_through_rate(0.4, CONFIG) == pytest.approx(0.005)
    assert p_sale(0.005, 1) == pytest.approx(0.005)
    assert p_sale(0.005, 3) == pytest.approx(1 - 0.995**3)
    assert p_sale(0.0, 3) == 0.0


def test_a_one_year_hold_pays_only_the_registration() -> None:
    one_year = ScoringConfig(holding_years=1)
    result = money(Acquisition("example.com"), 5000.0, 0.8, one_year)
    # holding 10.46; P = 0.01; revenue = 5,000 × 0.8 × 0.01 = 40; profit 29.54
    assert (result.holding_cost, result.expected_revenue, result.expected_profit) == (
        10.46,
        40.0,
        29.54,
    )
    purchase = money(Acquisition("example.com", True, 20.0), 5000.0, 0.8, one_year)
    assert purchase.holding_cost == 20.0 + 10.46  # a bought name's term is unknown: renew it


@pytest.mark.parametrize(
    ("acquisition", "problem", "buy_max"),
    [
        # no listed price: the gate cannot pass, the buy max is still shown (100 − 31.38)
        (Acquisition("example.com", purchase=True), NO_LISTED_PRICE, 68.62),
        # a TLD the table does not price: no holding cost, no safe maximum
        (Acquisition("example.dev"), f"no price for .dev in {BUNDLED}", 0.0),
        (
            Acquisition("example.dev", purchase=True),
            f"{NO_LISTED_PRICE}; no price for .dev in {BUNDLED}",
            0.0,
        ),
        (
            Acquisition("example.dev", purchase=True, listed_price=50.0),
            f"no price for .dev in {BUNDLED}",
            0.0,
        ),
    ],
)
def test_a_missing_price_fails_the_gate_and_says_so(
    acquisition: Acquisition, problem: str, buy_max: float
) -> None:
    result = money(acquisition, 5000.0, 0.6, CONFIG)
    assert result.problem == problem
    assert not result.passes
    assert result.expected_profit is None
    assert result.buy_max == buy_max


def test_a_known_renewal_and_a_listed_price_need_no_table_row() -> None:
    listing = Acquisition("example.dev", purchase=True, listed_price=50.0, renewal_cost=15.0)
    result = money(listing, 5000.0, 0.6, CONFIG)
    assert result.problem is None
    assert result.holding_cost == 50.0 + 15.0 * 3


def test_every_figure_is_in_the_document() -> None:
    document: dict[str, Any] = money(Acquisition("example.com"), 5000.0, 0.6, CONFIG).to_dict()
    assert document == {
        "purchase": False,
        "acquisition_cost": 10.46,
        "renewal_per_year": 10.46,
        "holding_years": 3,
        "holding_cost": 31.38,
        "carrying_cost": 31.38,
        "sale_commission": 0.2,
        "annual_sell_through": 0.01,
        "sell_through_rate": pytest.approx(0.0075),
        "p_sale": pytest.approx(0.022332, abs=5e-7),
        "expected_revenue": 89.33,
        "expected_profit": 57.95,
        "buy_max": 68.62,
        "price_source": BUNDLED,
        "problem": None,
        "passes": True,
        "wholesale_p50": None,  # valued without the value model
        "above_wholesale": False,
    }


def test_default_buy_max_ratio_stays_below_break_even_at_full_confidence() -> None:
    """The buy-max ratio's default (ADR 0014): at the confidence cap a name earns back at most
    (1 − 0.20) × (1 − 0.99³) = 2.38 % of its EV, so a buy max above 2 % of EV would be a price
    the money gate rejects."""
    break_even = (1 - CONFIG.sale_commission) * p_sale(CONFIG.annual_sell_through, 3)
    assert CONFIG.buy_max_ratio <= break_even
