"""The backtest report measures the value model's ranges with the valuation's metrics: the range
of the sale's venue class against the realised price, samples without ranges left out."""

from __future__ import annotations

from typing import Any

import pytest

from dominus.backtest.report import build_report
from dominus.backtest.value_figures import value_model_figures, value_prediction
from dominus.scoring.config import ScoringConfig
from dominus.scoring.weights import Weights
from tests.support.backtest_samples import sample


def ranges(wholesale: float, retail: float) -> dict[str, Any]:
    return {
        "wholesale": {"p10": wholesale / 2, "p50": wholesale, "p90": wholesale * 2},
        "retail": {"p10": retail / 2, "p50": retail, "p90": retail * 2},
    }


def test_a_marketplace_sale_is_measured_with_the_retail_range() -> None:
    retail = sample(5000.0, inputs={"value": ranges(1000, 4000), "venue": "Sedo"})
    wholesale = sample(900.0, inputs={"value": ranges(1000, 4000), "venue": "NameJet"})
    unknown = sample(900.0, inputs={"value": ranges(1000, 4000), "venue": None})
    assert value_prediction(retail) is not None and value_prediction(retail).p50 == 4000  # type: ignore[union-attr]
    assert value_prediction(wholesale).p50 == 1000  # type: ignore[union-attr]
    assert value_prediction(unknown).venue_class == "wholesale"  # type: ignore[union-attr]


def test_the_figures_of_a_hand_computed_set() -> None:
    samples = [
        # p50 1000 for 1000: exact, inside; p50 1000 for 4000: log error 0.602, outside (p90 2000)
        sample(1000.0, domain="a.com", inputs={"value": ranges(1000, 1), "venue": "GoDaddy"}),
        sample(4000.0, domain="b.com", inputs={"value": ranges(1000, 1), "venue": "GoDaddy"}),
        # retail p50 8000 for 10000: log error 0.097, inside
        sample(10_000.0, domain="c.io", inputs={"value": ranges(1, 8000), "venue": "Afternic"}),
        sample(700.0, domain="d.com"),  # scored before the value model
    ]
    figures = value_model_figures(samples)
    assert figures["sample_size"] == 3
    assert figures["left_out"] == 1
    overall = figures["overall"]
    assert overall["n"] == 3
    assert overall["within_2x"] == pytest.approx(2 / 3)
    assert overall["coverage"] == pytest.approx(2 / 3)
    assert overall["median_abs_log10_error"] == pytest.approx(0.0969, abs=1e-3)  # log10(1.25)
    # Pearson of the ranks (1.5, 1.5, 3) and (1, 2, 3): 1.5 ÷ √(1.5 × 2) = √3 ÷ 2
    assert overall["spearman"] == pytest.approx(3**0.5 / 2)
    assert set(figures["by_venue_class"]) == {"wholesale", "retail"}
    assert figures["by_venue_class"]["retail"]["n"] == 1
    assert set(figures["by_band"]) == {"< $2k", "$2k–20k"}


def test_the_report_carries_the_value_model_section() -> None:
    samples = [sample(500.0, inputs={"value": ranges(400, 900), "venue": "Dynadot"})]
    section = build_report(samples, Weights(), ScoringConfig())["value_model"]
    assert section["sample_size"] == 1
    assert section["overall"]["bias"] == pytest.approx(0.8)  # 400 ÷ 500


@pytest.mark.parametrize(
    "value", [None, "text", {"retail": {"p10": 1}}, {"wholesale": {"p10": 0, "p50": 1, "p90": 2}}]
)
def test_ranges_that_cannot_be_measured_are_left_out(value: Any) -> None:
    assert value_prediction(sample(100.0, inputs={"value": value})) is None
