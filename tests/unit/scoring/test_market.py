"""Comparable sales: relevance by shared words and comparable TLDs, recency, the weighted lower
quartile, market evidence (at least 3 relevant sales) and the index."""

from __future__ import annotations

import random
from datetime import date

import pytest

from dominus.providers.models import ComparableSale
from dominus.scoring import ComparablesIndex, ScoringConfig, market_signal, relevant_comparables
from dominus.scoring.comparables import Candidate, match
from dominus.scoring.market import (
    MarketResult,
    UsedSale,
    market_result,
    recency_weight,
    weighted_quantile,
    years_before,
)
from dominus.scoring.words import word_tokens

CONFIG = ScoringConfig()
TODAY = date(2025, 6, 15)


def sale(
    price: float, sold: date = TODAY, currency: str = "USD", domain: str = "cloudbase.com"
) -> ComparableSale:
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
    # market_signal uses the same brackets: "cloudbase" shares "cloud", half of "cloudnest"
    (used,) = market_signal("cloudnest.com", [sale(1000, sold)], today, CONFIG).used
    assert (used.recency, used.overlap, used.weight) == (expected, 0.5, expected * 0.5)


def test_years_before_handles_leap_days() -> None:
    assert years_before(date(2024, 2, 29), 1) == date(2023, 2, 28)
    assert years_before(date(2024, 2, 29), 4) == date(2020, 2, 29)


@pytest.mark.parametrize(
    ("pairs", "quantile", "expected"),
    [
        ([(5.0, 1.0)], 0.25, 5.0),
        # equal weights, total 3, a quarter is 0.75: the first value's 1 reaches it
        ([(3.0, 1.0), (1.0, 1.0), (2.0, 1.0)], 0.25, 1.0),
        # total 4, target 1: reached exactly by the first value
        ([(4.0, 1.0), (1.0, 1.0), (3.0, 1.0), (2.0, 1.0)], 0.25, 1.0),
        # total 5, target 1.25: 1 after the first value, 2 after the second
        ([(1.0, 1.0), (2.0, 1.0), (3.0, 1.0), (4.0, 1.0), (5.0, 1.0)], 0.25, 2.0),
        # the median of four is the lower middle value: target 2 reached at the second
        ([(1.0, 1.0), (2.0, 1.0), (3.0, 1.0), (4.0, 1.0)], 0.5, 2.0),
        # total 1.4, target 0.35: 0.2 after 100, 0.4 after 1000
        ([(100.0, 0.2), (1000.0, 0.2), (2000.0, 1.0)], 0.25, 1000.0),
        # a heavy cheap sale: total 1.4, target 0.35 reached by 100's 1.0
        ([(100.0, 1.0), (1000.0, 0.2), (2000.0, 0.2)], 0.25, 100.0),
        # no positive weight: every value counts 1 (target 0.5 → the first)
        ([(7.0, 0.0), (9.0, 0.0)], 0.25, 7.0),
    ],
)
def test_weighted_quantile(
    pairs: list[tuple[float, float]], quantile: float, expected: float
) -> None:
    assert weighted_quantile(pairs, quantile) == expected


def test_weighted_quantile_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError):
        weighted_quantile([], 0.25)


def test_fewer_than_three_relevant_sales_are_listed_but_are_not_market_evidence() -> None:
    sales = [sale(9000), sale(12_000, domain="birdnest.com")]
    result = market_signal("cloudnest.com", sales, TODAY, CONFIG)
    assert (result.score, result.statistic, result.evidence) == (None, None, False)
    assert (result.relevant, result.required) == (2, 3)
    assert [used.domain for used in result.used] == ["birdnest.com", "cloudbase.com"]
    assert result.to_dict()["evidence"] is False


def test_the_statistic_is_the_weighted_lower_quartile_of_relevant_sales() -> None:
    sales = [
        sale(1000, date(2025, 1, 1)),  # "cloud": recency 1.0 × overlap 0.5 = 0.5
        sale(3000, date(2024, 1, 1), domain="cloudbox.com"),  # 0.7 × 0.5 = 0.35
        sale(6000, date(2022, 1, 1), domain="birdnest.com"),  # 0.4 × 0.5 = 0.2
        sale(50_000, TODAY, domain="nestcloud.com"),  # both words: 1.0 × 1.0 = 1.0
        sale(99_000, TODAY, domain="zebra.com"),  # no shared word: ignored, not counted
    ]
    result = market_signal("cloudnest.com", sales, TODAY, CONFIG)
    # total 2.05, a quarter 0.5125: 0.5 after 1000, 0.85 after 3000 → 3000
    assert result.statistic == 3000
    assert result.score == pytest.approx((3000 - 500) / 9500)
    assert result.relevant == 4
    assert result.used[0].domain == "nestcloud.com"  # heaviest first


def test_a_comparable_tld_counts_at_half_price() -> None:
    sales = [sale(4000, domain=f"cloud{n}.net") for n in ("base", "box", "kit")]
    result = market_signal("cloudnest.com", sales, TODAY, CONFIG)
    assert [used.adjusted_price for used in result.used] == [2000.0] * 3
    assert result.statistic == 2000.0
    other = market_signal("cloudnest.io", sales, TODAY, CONFIG)
    assert other.relevant == 0  # .io and .net are not comparable


def test_currency_and_invalid_prices_are_counted_apart() -> None:
    sales = [
        sale(1000),
        sale(3000, currency="usd"),  # currency is case-insensitive
        sale(6000),
        sale(50_000, currency="EUR"),
        sale(0),
        sale(float("nan")),
        sale(70_000, currency="GBP", domain="zebra.com"),  # irrelevant: not counted at all
    ]
    result = market_signal("cloudnest.com", sales, TODAY, CONFIG)
    assert (result.relevant, result.ignored_currency, result.ignored_invalid) == (3, 1, 2)
    in_euros = market_signal("cloudnest.com", sales, TODAY, ScoringConfig(currency="EUR"))
    # the currency is checked first: the five relevant USD sales (valid or not) are set aside
    assert (in_euros.relevant, in_euros.ignored_currency) == (1, 5)


def test_only_the_heaviest_sales_are_used() -> None:
    old = [sale(100, date(2010, 1, 1)) for _ in range(20)]  # 0.2 × 0.5 = 0.1 each
    recent = [sale(8000, TODAY, domain="cloudnest.com") for _ in range(5)]  # 1.0 × 1.0
    result = market_signal("cloudnest.com", old + recent, TODAY, CONFIG)
    assert (result.relevant, len(result.used)) == (25, 20)
    assert [used.price for used in result.used[:5]] == [8000] * 5
    # 5 × 1.0 + 15 × 0.1 = 6.5; a quarter 1.625 is reached only after the 15 cheap ones (1.5)
    assert result.statistic == 8000


@pytest.mark.parametrize(
    ("prices", "expected"), [([400.0], 0.0), ([500.0], 0.0), ([10_000.0], 1.0), ([2e4], 1.0)]
)
def test_market_score_is_clamped(prices: list[float], expected: float) -> None:
    sales = [sale(p) for p in prices * 3]
    assert market_signal("cloudnest.com", sales, TODAY, CONFIG).score == expected


@pytest.mark.parametrize(
    ("candidate", "sold", "relevant"),
    [
        ("cloudnest.com", "cloudbase.com", True),  # shares the word "cloud"
        ("cloudnest.com", "birdnest.com", True),  # shares "nest"
        ("cloudnest.com", "cloudnest.com", True),  # its own earlier sale
        ("cloudnest.com", "CloudNest.COM", True),
        ("cloudnest.com", "cloudnest.net", True),  # a comparable TLD
        ("cloudnest.com", "cloudnest.io", False),  # not comparable
        ("cloudnest.com", "honestly.com", False),  # "nest" inside another word
        ("cloudnest.com", "clo.com", False),
        # the example: a 4-letter prefix is not a word in common
        ("homework.com", "homeinsure.com", False),
        ("homeowl.com", "homeinsure.com", True),  # "home" is
        ("best-shoes.com", "shoes-online.com", True),
        ("best-shoes.com", "redshoes.com", True),
        ("best-shoes.com", "shoes.co.uk", False),
        ("ab.com", "ab-tools.com", False),  # "ab" is below the 3-letter minimum
        ("thecloud.com", "thebest.com", False),  # "the" is a function word
        ("shopnow.co.uk", "shopnear.co.uk", True),
        ("shopnow.co.uk", "shopnow.uk", False),
        ("ok123.com", "ok456.com", False),  # digits are not words
        ("xn--bcher-kva.com", "xn--bcher-kva.net", True),  # an IDN matches only itself
        ("xn--bcher-kva.com", "xn--bcher-kvb.com", False),
    ],
)
def test_relevant_comparables(candidate: str, sold: str, relevant: bool) -> None:
    chosen = relevant_comparables(candidate, [sale(1000, domain=sold)])
    assert bool(chosen) is relevant


def test_word_tokens() -> None:
    assert word_tokens("homeowl") == {"home", "owl"}
    assert word_tokens("homework") == {"homework"}
    assert word_tokens("gymathome") == {"gym", "home"}  # "at" is too short
    assert word_tokens("gymathome", min_length=2) == {"gym", "at", "home"}
    assert word_tokens("xn--bcher-kva") == frozenset()


def test_relevant_comparables_keeps_input_order() -> None:
    sales = [
        sale(1, domain="cloudbase.com"),
        sale(2, domain="zebra.com"),
        sale(3, domain="birdnest.com"),
    ]
    assert [s.price for s in relevant_comparables("cloudnest.com", sales)] == [1, 3]


def test_the_index_answers_exactly_as_the_plain_rule() -> None:
    """ComparablesIndex is an optimisation of relevant_comparables: same sales, same order."""
    rng = random.Random(3)
    words = ["cloud", "nest", "shoe", "shoes", "best", "online", "bird", "base", "go", "pro"]

    def name() -> str:
        parts = rng.sample(words, rng.randint(1, 3))
        label = rng.choice(["", "-"]).join(parts)
        return f"{label}.{rng.choice(['com', 'net', 'io', 'co.uk'])}"

    sales = [
        ComparableSale(name(), rng.randint(100, 50_000), "USD", date(2024, 1, 1))
        for _ in range(400)
    ]
    index = ComparablesIndex(sales)
    for _ in range(300):
        candidate = name()
        assert index.relevant(candidate) == relevant_comparables(candidate, sales), candidate


def plain_market_signal(
    domain: str, sales: list[ComparableSale], today: date, config: ScoringConfig
) -> MarketResult:
    """The market signal by the plain rule, sale by sale, to check the index against."""
    candidate = Candidate.of(domain, config)
    relevant: list[UsedSale] = []
    ignored_currency = ignored_invalid = 0
    for sold in sales:
        found = match(candidate, sold, config)
        if found is None:
            continue
        if sold.currency.upper() != config.currency.upper():
            ignored_currency += 1
            continue
        if not sold.price > 0:
            ignored_invalid += 1
            continue
        recency = recency_weight(sold.sale_date, today, config)
        relevant.append(
            UsedSale(
                sold.domain,
                sold.price,
                sold.price * found.tld_factor,
                sold.currency,
                sold.sale_date,
                recency,
                found.overlap,
                found.shared_words,
                recency * found.overlap,
            )
        )
    ranked = sorted(
        relevant, key=lambda used: (-used.weight, -used.sale_date.toordinal(), used.domain)
    )
    return market_result(
        ranked[: config.max_comparables], len(relevant), ignored_currency, ignored_invalid, config
    )


def test_the_index_market_is_the_plain_rule() -> None:
    rng = random.Random(5)
    words = ["cloud", "nest", "shoes", "best", "online", "bird", "home", "gym", "go", "pro"]

    def name() -> str:
        label = "".join(rng.sample(words, rng.randint(1, 3)))
        return f"{label}.{rng.choice(['com', 'net', 'org', 'io'])}"

    sales = [
        ComparableSale(
            name(),
            rng.choice([rng.randint(100, 50_000), 0]),
            rng.choice(["USD"] * 9 + ["EUR"]),
            date(rng.randint(2015, 2026), rng.randint(1, 12), 1),
        )
        for _ in range(600)
    ]
    index = ComparablesIndex(sales, CONFIG)
    for _ in range(200):
        candidate = name()
        assert index.market(candidate, TODAY) == plain_market_signal(
            candidate, sales, TODAY, CONFIG
        ), candidate
