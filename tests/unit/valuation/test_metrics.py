"""Expected values computed by hand from the definitions in metrics.py."""

from __future__ import annotations

import math

import pytest

from dominus.valuation.metrics import (
    Prediction,
    evaluate,
    figures,
    price_band,
    ranks,
    spearman,
)


def p(
    realised: float, p50: float, p10: float | None = None, p90: float | None = None
) -> Prediction:
    return Prediction("x.com", realised, p10 or p50 / 2, p50, p90 or p50 * 2, "wholesale", "com")


def test_ranks_share_ties() -> None:
    assert ranks([10.0, 20.0, 20.0, 5.0]) == [2.0, 3.5, 3.5, 1.0]


def test_spearman_of_a_monotone_and_a_reversed_relation() -> None:
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [40, 30, 20, 10]) == pytest.approx(-1.0)
    assert spearman([1, 1, 1], [1, 2, 3]) is None


def test_figures_by_hand() -> None:
    # realised 100, 1000, 10000; p50 200, 1000, 1000 → log10 errors 0.301, 0, 1
    predictions = [p(100, 200), p(1000, 1000), p(10000, 1000, p90=5000)]
    result = figures(predictions)
    assert result.n == 3
    assert result.median_abs_log10_error == pytest.approx(math.log10(2))
    assert result.within_2x == pytest.approx(2 / 3)  # a factor of exactly 2 counts as within
    # R² on log10: realised logs 2, 3, 4 (mean 3, total 2); residuals 0.301, 0, 1
    assert result.r2_log == pytest.approx(1 - (math.log10(2) ** 2 + 0 + 1) / 2)
    assert result.bias == pytest.approx(1.0)  # ratios 2, 1, 0.1: median 1
    assert result.coverage == pytest.approx(2 / 3)  # 10000 is above its P90 of 5000
    assert result.spearman == pytest.approx(0.866, abs=1e-3)  # ranks (1, 2.5, 2.5) vs (1, 2, 3)


def test_empty_and_constant_inputs() -> None:
    assert figures([]).n == 0
    assert figures([p(100, 100), p(100, 200)]).r2_log is None


def test_price_bands_and_grouping() -> None:
    assert price_band(1999) == "< $2k"
    assert price_band(2000) == "$2k–20k"
    assert price_band(200_000) == "≥ $200k"
    report = evaluate([p(100, 100), p(50_000, 40_000)])
    assert list(report.by_band) == ["< $2k", "$20k–200k"]
    assert report.by_venue_class["wholesale"].n == 2
    assert set(report.to_dict()) == {"overall", "by_band", "by_venue_class", "by_tld_group"}
