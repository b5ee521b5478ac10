"""Comparable sales: recency weights, weighted median, density, currency, relevance."""

from __future__ import annotations

import random
from datetime import date

import pytest

from dominus.providers.models import ComparableSale
from dominus.scoring import ComparablesIndex, relevant_comparables
from dominus.scoring.config import ScoringConfig
from dominus.scoring.market import market_signal, recency_weight, weighted_median, years_before

CONFIG = ScoringConfig()
TODAY = date(2025, 6, 15)


def sale(price: float, sold: date, currency: str = "USD", domain: str = "x.com") -> ComparableSale:
    return ComparableSale(domain=domain, price=price, currency=currency, sale_date=sold)


@pytest.mark.parametrize(
    ("today", "sold", "expected"),
    [
        (TODAY, date(2025, 7, 1), 1.0),  # dated after today: as recent as it gets
        (TODAY, date(2025, 6, 15), 1.0),
        (TODAY, date(2024, 6, 15), 1.0),  # exactly 1 year: inclusive
        (TODAY, date(2024, 6, 14), 0.7),
        (TODAY, date(2023, 6, 15), 0.7),  # exactly 2 years
        (TODAY, date(2023, 6, 14), 0.4),
        (TODAY, date(2020, 6, 15), 0.4),  # exactly 5 years
        (TODAY, date(2020, 6, 14), 0.2),
        (TODAY, date(1999, 1, 1), 0.2),
        (date(2024, 2, 29), date(2023, 2, 28), 1.0),  # 29 Feb's anniversary is 28 Feb
        (date(2024, 2, 29), date(2023, 2, 27), 0.7),
    ],
)
def test_recency_weight_brackets_are_inclusive(today: date, sold: date, expected: float) -> None:
    assert recency_weight(sold, today, CONFIG) == expected
    # market_signal uses the same brackets: one sale → its weight shows in the density
    result = market_signal([sale(1000, sold)], today, CONFIG)
    assert result.density == pytest.approx(0.7 * 1 / 20 + 0.3 * expected / 5)


def test_years_before_handles_leap_days() -> None:
    assert years_before(date(2024, 2, 29), 1) == date(2023, 2, 28)
    assert years_before(date(2024, 2, 29), 4) == date(2020, 2, 29)


@pytest.mark.parametrize(
    ("pairs", "expected"),
    [
        ([(5.0, 1.0)], 5.0),
        ([(1.0, 1.0), (2.0, 1.0), (3.0, 1.0)], 2.0),
        ([(4.0, 1.0), (1.0, 1.0), (3.0, 1.0), (2.0, 1.0)], 2.5),  # even count: mean of middle two
        ([(100.0, 1.0), (1000.0, 0.2), (2000.0, 0.2)], 100.0),  # the recent cheap sale dominates
        ([(100.0, 0.2), (1000.0, 0.2), (2000.0, 1.0)], 2000.0),
        ([(100.0, 0.7), (1000.0, 0.7)], 550.0),
    ],
)
def test_weighted_median(pairs: list[tuple[float, float]], expected: float) -> None:
    assert weighted_median(pairs) == pytest.approx(expected)


def test_weighted_median_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError):
        weighted_median([])


def test_market_signal_filters_currency_and_invalid_prices() -> None:
    sales = [
        sale(1000, date(2025, 1, 1)),  # weight 1.0
        sale(3000, date(2024, 1, 1), currency="usd"),  # weight 0.7, currency case-insensitive
        sale(6000, date(2022, 1, 1)),  # weight 0.4
        sale(50_000, date(2025, 1, 1), currency="EUR"),
        sale(70_000, date(2025, 1, 1), currency="GBP"),
        sale(0, date(2025, 1, 1)),
        sale(float("nan"), date(2025, 1, 1)),
    ]
    result = market_signal(sales, TODAY, CONFIG)
    assert (result.sales, result.ignored_currency, result.ignored_invalid) == (3, 2, 2)
    # total weight 2.1, half 1.05: cumulative 1.0 at 1000, 1.7 at 3000 → 3000
    assert result.median == pytest.approx(3000)
    assert result.score == pytest.approx(2500 / 9500)
    assert result.density == pytest.approx(0.7 * 3 / 20 + 0.3 * 2.1 / 5)


def test_market_signal_in_another_currency() -> None:
    sales = [sale(1000, TODAY), sale(2000, TODAY, currency="EUR")]
    result = market_signal(sales, TODAY, ScoringConfig(currency="EUR"))
    assert (result.sales, result.ignored_currency, result.median) == (1, 1, 2000)


def test_no_usable_sale_means_unavailable() -> None:
    result = market_signal([sale(9000, TODAY, currency="EUR")], TODAY, CONFIG)
    assert (result.score, result.median, result.density) == (None, None, 0.0)
    assert result.ignored_currency == 1
    assert market_signal([], TODAY, CONFIG).score is None


@pytest.mark.parametrize(
    ("prices", "expected"), [([400.0], 0.0), ([500.0], 0.0), ([10_000.0], 1.0), ([20_000.0], 1.0)]
)
def test_market_score_is_clamped(prices: list[float], expected: float) -> None:
    assert market_signal([sale(p, TODAY) for p in prices], TODAY, CONFIG).score == expected


@pytest.mark.parametrize(
    ("dates", "expected"),
    [
        ([TODAY] * 25, 0.7 + 0.3),  # count and recent weight both saturate
        ([date(2010, 1, 1)] * 10, 0.7 * 10 / 20 + 0.3 * 2.0 / 5),
        # 12 sales: the 10 most recent are the 2 new (1.0 each) and 8 old (0.2 each) = 3.6
        ([TODAY] * 2 + [date(2010, 1, 1)] * 10, 0.7 * 12 / 20 + 0.3 * 3.6 / 5),
    ],
)
def test_density(dates: list[date], expected: float) -> None:
    sales = [sale(1000, d) for d in dates]
    assert market_signal(sales, TODAY, CONFIG).density == pytest.approx(expected)


@pytest.mark.parametrize(
    ("candidate", "sold", "relevant"),
    [
        ("cloudnest.com", "cloudbase.com", True),  # shared 4-letter prefix "clou"
        ("cloudnest.com", "birdnest.com", True),  # shared 4-letter suffix "nest"
        ("cloudnest.com", "nest.com", True),
        ("cloudnest.com", "cloud-storage.com", True),  # hyphens ignored for affixes
        ("cloudnest.com", "cloudnest.com", True),  # its own earlier sale
        ("cloudnest.com", "CloudNest.COM", True),
        ("cloudnest.com", "cloudnest.net", False),  # other TLD
        ("cloudnest.com", "honestly.com", False),  # "nest" inside, not at an end
        ("cloudnest.com", "clo.com", False),  # too short to share 4 letters
        ("cloudnest.com", "clovernest.io", False),
        ("best-shoes.com", "shoes-online.com", True),  # shared hyphen token "shoes"
        ("best-shoes.com", "bestbuy.com", True),
        ("best-shoes.com", "redshoes.com", True),  # suffix "hoes"
        ("best-shoes.com", "shoes.co.uk", False),
        ("ab.com", "ab-tools.com", False),  # "ab" is below the 3-letter token minimum
        ("shop.co.uk", "shopper.co.uk", True),
        ("shop.co.uk", "shopper.uk", False),
    ],
)
def test_relevant_comparables(candidate: str, sold: str, relevant: bool) -> None:
    chosen = relevant_comparables(candidate, [sale(1000, TODAY, domain=sold)])
    assert bool(chosen) is relevant


def test_relevant_comparables_keeps_input_order() -> None:
    sales = [
        sale(1, TODAY, domain="cloudbase.com"),
        sale(2, TODAY, domain="zebra.com"),
        sale(3, TODAY, domain="birdnest.com"),
    ]
    assert [s.price for s in relevant_comparables("cloudnest.com", sales)] == [1, 3]


def test_the_index_answers_exactly_as_the_plain_rule() -> None:
    """ComparablesIndex is an optimisation of relevant_comparables: same sales, same order."""
    rng = random.Random(3)
    words = ["cloud", "nest", "shoe", "shoes", "best", "online", "bird", "base", "go", "pro"]

    def name() -> str:
        parts = rng.sample(words, rng.randint(1, 3))
        label = rng.choice(["", "-"]).join(parts)
        return f"{label}.{rng.choice(['com', 'net', 'co.uk'])}"

    sales = [
        ComparableSale(name(), rng.randint(100, 50_000), "USD", date(2024, 1, 1))
        for _ in range(400)
    ]
    index = ComparablesIndex(sales)
    for _ in range(300):
        candidate = name()
        assert index.relevant(candidate) == relevant_comparables(candidate, sales), candidate
