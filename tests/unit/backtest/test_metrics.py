"""The report's figures on a fixture computed by hand (ADR 0025's list of metrics)."""

from __future__ import annotations

import math

import pytest

from dominus.backtest.metrics import Prediction, better, metrics
from dominus.backtest.report import build_report
from dominus.backtest.samples import confidence_bucket
from dominus.scoring.config import ScoringConfig
from dominus.scoring.weights import Weights
from tests.support.backtest_samples import sample

# predicted, realised, buy max: errors 100, 100, 50, 350
FIXTURE = [
    Prediction(100, 200, 50),
    Prediction(300, 200, 100),
    Prediction(150, 100, 120),
    Prediction(50, 400, 0),
]


def test_the_metrics_of_the_hand_computed_fixture() -> None:
    found = metrics(FIXTURE)
    assert found.sample_size == 4
    assert found.mae == pytest.approx(150.0)  # (100 + 100 + 50 + 350) / 4
    assert found.median_absolute_error == pytest.approx(100.0)  # (100 + 100) / 2
    assert found.median_ape == pytest.approx(0.5)  # 0.5, 0.5, 0.5, 0.875
    assert found.bias == pytest.approx(600 / 900)  # Σ predicted ÷ Σ realised
    assert found.bias_percent == pytest.approx(-100 / 3)
    assert found.within_50_percent == pytest.approx(0.75)  # 350 > 0.5 × 400 only
    assert found.buy_max_hit_rate == pytest.approx(2 / 3)  # 100 < 120; buy max 0 not counted
    assert found.buy_max_sample == 3
    assert found.conservative_share == pytest.approx(0.5)  # 100 ≤ 200 and 50 ≤ 400


def test_r2_on_log_prices() -> None:
    realised = [100.0, 1000.0, 10_000.0]
    perfect = metrics([Prediction(r, r) for r in realised])
    assert perfect.r2_log == pytest.approx(1.0)
    geometric_mean = math.exp(sum(math.log(r) for r in realised) / 3)  # 1000
    flat = metrics([Prediction(geometric_mean, r) for r in realised])
    assert flat.r2_log == pytest.approx(0.0)
    # residuals ln 10 each, total Σ(ln r − ln 1000)² = 2 (ln 10)²: 1 − 3/2
    tenfold = metrics([Prediction(r * 10, r) for r in realised])
    assert tenfold.r2_log == pytest.approx(-0.5)


def test_an_empty_sample_has_no_figures() -> None:
    found = metrics([])
    assert found.sample_size == 0
    assert found.mae is None
    assert found.r2_log is None


@pytest.mark.parametrize(
    ("confidence", "bucket"),
    [(0.0, "low"), (0.2999, "low"), (0.3, "mid"), (0.5999, "mid"), (0.6, "high"), (0.8, "high")],
)
def test_confidence_buckets(confidence: float, bucket: str) -> None:
    assert confidence_bucket(confidence) == bucket


def test_which_is_better() -> None:
    assert better("mae", 10, 20) == "engine"
    assert better("within_50_percent", 0.2, 0.4) == "baseline"
    assert better("bias", 0.9, 1.3) == "engine"  # closer to 1
    assert better("bias", 1.5, 0.7) == "baseline"
    assert better("mae", 10, 10) == "tie"
    assert better("mae", None, 10) is None


def test_the_report_sets_the_engine_beside_the_baseline_on_the_baselines_sample() -> None:
    samples = [
        sample(200, 100, baseline=400, confidence=0.2),  # engine error 100, baseline 200
        sample(200, 300, baseline=200, confidence=0.45),  # engine 100, baseline 0
        sample(100, 150, baseline=None, confidence=0.7),  # no baseline
    ]
    report = build_report(samples, Weights(), ScoringConfig())
    assert report["sample_size"] == 3
    assert report["baseline_coverage"] == 2
    assert report["engine"]["mae"] == pytest.approx((100 + 100 + 50) / 3)
    comparison = report["comparison"]
    assert comparison["sample_size"] == 2
    assert comparison["engine"]["mae"] == pytest.approx(100.0)
    assert comparison["baseline"]["mae"] == pytest.approx(100.0)  # (200 + 0) / 2
    assert comparison["better"]["mae"] == "tie"
    # Σ 400 / Σ 400 for the engine, Σ 600 / Σ 400 for the baseline
    assert comparison["engine"]["bias"] == pytest.approx(1.0)
    assert comparison["baseline"]["bias"] == pytest.approx(1.5)
    assert comparison["better"]["bias"] == "engine"
    buckets = report["buckets"]
    assert [buckets[name]["sample_size"] for name in ("low", "mid", "high")] == [1, 1, 1]
    # within ±50 %: the high bucket's 150 vs 100 is exactly 50 % off (inside), confidence 0.7
    assert buckets["high"]["calibration_gap"] == pytest.approx(1.0 - 0.7)


def test_walk_forward_tests_each_fold_on_later_sales_only() -> None:
    samples = [
        sample(100 + day, 100, domain=f"n{day}.com", sale_date=sample(1).sale_date.replace(day=day))
        for day in range(1, 13)
    ]
    walk = build_report(samples, Weights(), ScoringConfig())["walk_forward"]
    folds = walk["folds"]
    assert [fold["trained_before"] for fold in folds] == ["2026-03-04", "2026-03-07", "2026-03-10"]
    assert [(fold["train"], fold["test"]) for fold in folds] == [(3, 3), (6, 3), (9, 3)]
    assert walk["test_size"] == 9
