"""The backtest report: the engine's error metrics beside a comparable-sales-only
baseline, per confidence bucket, and walk-forward.

Baseline: the recency-weighted median of the relevant comparable sales the score listed (their
TLD-adjusted prices, each weighed by its recency when scored), and its buy max by the engine's
rule (baseline × SCORING_BUY_MAX_RATIO − the carrying cost, capped). A sample whose score listed
no relevant sale has no baseline prediction, so the two are compared on the samples that have
one (`comparison`); the engine's figures over every sample are `engine`.

Calibration per bucket: the bucket's mean confidence beside its share within ±50 % (a calibrated
engine is right about as often as it is confident, and more often in higher buckets).

Walk-forward: the samples in sale-date order are cut at `folds` dates; each fold trains the weight
suggester on the sales before its cut and tests on the sales from the cut to the next one, so no
fold learns from a sale it is judged on. Each fold reports the MAE of the engine as it scored, of
the current weights and of the weights suggested on the training sales (both re-weighed), and of
the baseline.

Value model: the P10–P90 ranges the scores carried, measured by the valuation's own metrics module
(value_figures.py), overall and per price band, venue class and TLD group.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from dominus.backtest.metrics import DIRECTIONS, Prediction, better, metrics
from dominus.backtest.reweigh import mean_absolute_error
from dominus.backtest.samples import BUCKETS, Sample
from dominus.backtest.suggest import suggest
from dominus.backtest.value_figures import value_model_figures
from dominus.scoring.config import ScoringConfig
from dominus.scoring.weights import Weights

DEFAULT_FOLDS = 3


def baseline_buy_max(sample: Sample, config: ScoringConfig) -> float | None:
    if sample.baseline is None or sample.carrying_cost is None:
        return None
    ceiling = sample.baseline * config.buy_max_ratio - sample.carrying_cost
    return max(0.0, min(ceiling, config.buy_max_absolute_cap))


def engine_predictions(samples: Sequence[Sample]) -> list[Prediction]:
    return [Prediction(s.predicted, s.realised, s.buy_max) for s in samples]


def baseline_predictions(samples: Sequence[Sample], config: ScoringConfig) -> list[Prediction]:
    return [
        Prediction(s.baseline, s.realised, baseline_buy_max(s, config))
        for s in samples
        if s.baseline is not None
    ]


def comparison(samples: Sequence[Sample], config: ScoringConfig) -> dict[str, Any]:
    covered = [s for s in samples if s.baseline is not None]
    engine = metrics(engine_predictions(covered)).to_dict()
    baseline = metrics(baseline_predictions(covered, config)).to_dict()
    verdicts = {name: better(name, engine[name], baseline[name]) for name in DIRECTIONS}
    decided = [verdict for verdict in verdicts.values() if verdict is not None]
    wins = sum(1 for verdict in decided if verdict == "engine")
    losses = sum(1 for verdict in decided if verdict == "baseline")
    if not decided:
        summary = "no sample has a baseline (no relevant comparable sales): nothing to compare"
    elif wins > losses:
        summary = f"the engine beats the comparable-sales baseline on {wins} of {len(decided)}"
    elif wins < losses:
        summary = f"the comparable-sales baseline beats the engine on {losses} of {len(decided)}"
    else:
        summary = f"the engine and the baseline are level ({wins} each of {len(decided)})"
    return {
        "sample_size": len(covered),
        "engine": engine,
        "baseline": baseline,
        "better": verdicts,
        "engine_wins": wins,
        "baseline_wins": losses,
        "summary": summary + (" metrics" if decided else ""),
    }


def bucket_report(samples: Sequence[Sample], config: ScoringConfig) -> dict[str, Any]:
    buckets: dict[str, Any] = {}
    for bucket in BUCKETS:
        members = [s for s in samples if s.bucket == bucket]
        engine = metrics(engine_predictions(members))
        buckets[bucket] = {
            "sample_size": len(members),
            "mean_confidence": statistics.fmean(s.confidence for s in members) if members else None,
            "engine": engine.to_dict(),
            "baseline": metrics(baseline_predictions(members, config)).to_dict(),
            # calibration: how often right (±50 %) against how confident
            "calibration_gap": None
            if engine.within_50_percent is None
            else engine.within_50_percent - statistics.fmean(s.confidence for s in members),
        }
    return buckets


def fold_cuts(samples: Sequence[Sample], folds: int) -> list[date]:
    """The cut dates: the sale dates at i/(folds+1) of the date-ordered samples, distinct."""
    dates = sorted(s.sale_date for s in samples)
    cuts: list[date] = []
    for index in range(1, folds + 1):
        cut = dates[len(dates) * index // (folds + 1)] if dates else None
        if cut is not None and cut > dates[0] and (not cuts or cut > cuts[-1]):
            cuts.append(cut)
    return cuts


def walk_forward(
    samples: Sequence[Sample],
    current: Weights,
    config: ScoringConfig,
    *,
    folds: int = DEFAULT_FOLDS,
    split: date | None = None,
) -> dict[str, Any]:
    cuts = [split] if split is not None else fold_cuts(samples, folds)
    rows: list[dict[str, Any]] = []
    tested: list[Sample] = []
    suggested_errors = 0.0  # pooled over the folds, each with its own suggested weights
    for index, cut in enumerate(cuts):
        end = cuts[index + 1] if index + 1 < len(cuts) else None
        train = [s for s in samples if s.sale_date < cut]
        test = [s for s in samples if s.sale_date >= cut and (end is None or s.sale_date < end)]
        if not test:
            continue
        suggested = suggest(train, current).after
        suggested_mae = mean_absolute_error(test, suggested, config) or 0.0
        baseline = baseline_predictions(test, config)
        rows.append(
            {
                "trained_before": cut.isoformat(),
                "tested_until": end.isoformat() if end else None,
                "train": len(train),
                "test": len(test),
                "mae_as_scored": metrics(engine_predictions(test)).mae,
                "mae_current_weights": mean_absolute_error(test, current, config),
                "mae_suggested_weights": suggested_mae,
                "suggested_weights": suggested.to_dict(),
                "baseline_sample": len(baseline),
                "mae_baseline": metrics(baseline).mae,
            }
        )
        tested += test
        suggested_errors += suggested_mae * len(test)
    return {
        "folds": rows,
        "test_size": len(tested),
        "mae_as_scored": metrics(engine_predictions(tested)).mae,
        "mae_current_weights": mean_absolute_error(tested, current, config),
        "mae_suggested_weights": suggested_errors / len(tested) if tested else None,
        "mae_baseline": metrics(baseline_predictions(tested, config)).mae,
    }


@dataclass(frozen=True)
class ReportOptions:
    folds: int = DEFAULT_FOLDS
    split: date | None = None


def build_report(
    samples: Sequence[Sample],
    current: Weights,
    config: ScoringConfig,
    options: ReportOptions | None = None,
) -> dict[str, Any]:
    """The whole report as a JSON-ready document (`backtest report --json`, the API)."""
    options = options or ReportOptions()
    ordered = sorted(samples, key=lambda s: (s.sale_date, s.domain))
    engine = metrics(engine_predictions(ordered)).to_dict()
    return {
        "sample_size": len(ordered),
        "currency": config.currency,
        "first_sale": ordered[0].sale_date.isoformat() if ordered else None,
        "last_sale": ordered[-1].sale_date.isoformat() if ordered else None,
        "engine": engine,
        "baseline_coverage": sum(1 for s in ordered if s.baseline is not None),
        "comparison": comparison(ordered, config),
        "buckets": bucket_report(ordered, config),
        "walk_forward": walk_forward(
            ordered, current, config, folds=options.folds, split=options.split
        ),
        "weights": current.to_dict(),
        "value_model": value_model_figures(ordered),
    }
