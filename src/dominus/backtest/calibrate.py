"""Threshold calibration on the snapshot.

A candidate setting is (score threshold base, confidence threshold base, annual sell-through).
Under it a sample counts as recommended when, as the engine decides (decision.py, money.py):
  - its evidence gate passed and the trademark gate cleared it (as when it was scored);
  - weighted score ≥ score base + SCORING_SCORE_THRESHOLD_SPAN × its coverage ratio;
  - confidence ≥ confidence base + SCORING_CONFIDENCE_THRESHOLD_SPAN × its coverage ratio;
  - expected profit > 0 with that sell-through: EV × (1 − commission) × P(sale) − holding cost,
    P(sale) = 1 − (1 − sell-through × confidence / confidence cap)^holding years.
A recommendation is *good* when the name later sold at or above its buy max. For each setting:
precision = good recommended / recommended, recall = good recommended / good samples, and the
number recommended. The setting to use is the one reaching the target precision that recommends
the most good names (then the most names, then the strictest); none when no setting reaches it.

The thresholds written by `--apply` are the three SCORING_* values the search varies (ADR 0025).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dominus.backtest.samples import Sample
from dominus.pipeline.scoring_sets import THRESHOLD_FIELDS
from dominus.scoring.config import ScoringConfig

SCORE_BASES = tuple(round(0.10 + 0.05 * step, 2) for step in range(9))  # 0.10 … 0.50
CONFIDENCE_BASES = tuple(round(0.10 + 0.05 * step, 2) for step in range(7))  # 0.10 … 0.40
SELL_THROUGH_RATES = (0.005, 0.01, 0.02, 0.03)


@dataclass(frozen=True)
class Setting:
    score_threshold_base: float
    confidence_threshold_base: float
    annual_sell_through: float

    def to_dict(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in THRESHOLD_FIELDS}

    def strictness(self) -> tuple[float, float, float]:
        return (
            self.score_threshold_base,
            self.confidence_threshold_base,
            -self.annual_sell_through,
        )


@dataclass(frozen=True)
class Evaluation:
    setting: Setting
    recommended: int
    good_recommended: int
    good: int

    @property
    def precision(self) -> float | None:
        return self.good_recommended / self.recommended if self.recommended else None

    @property
    def recall(self) -> float | None:
        return self.good_recommended / self.good if self.good else None

    def to_dict(self) -> dict[str, Any]:
        return self.setting.to_dict() | {
            "recommended": self.recommended,
            "good_recommended": self.good_recommended,
            "precision": self.precision,
            "recall": self.recall,
        }


def good(sample: Sample) -> bool:
    return sample.realised >= sample.buy_max


def recommended_under(sample: Sample, setting: Setting, config: ScoringConfig) -> bool:
    inputs = sample.inputs
    gates = inputs.get("gates") or {}
    if not gates.get("evidence") or not inputs.get("trademark_clear"):
        return False
    ratio = float(inputs.get("coverage_ratio", 0.0))
    if sample.weighted_score < setting.score_threshold_base + config.score_threshold_span * ratio:
        return False
    confidence_threshold = (
        setting.confidence_threshold_base + config.confidence_threshold_span * ratio
    )
    if sample.confidence < confidence_threshold or sample.holding_cost is None:
        return False
    rate = setting.annual_sell_through * sample.confidence / config.confidence_cap
    chance = 1.0 - (1.0 - rate) ** config.holding_years
    profit = sample.predicted * (1.0 - config.sale_commission) * chance - sample.holding_cost
    return profit > 0


def evaluate(samples: Sequence[Sample], setting: Setting, config: ScoringConfig) -> Evaluation:
    picked = [s for s in samples if recommended_under(s, setting, config)]
    return Evaluation(
        setting,
        recommended=len(picked),
        good_recommended=sum(1 for s in picked if good(s)),
        good=sum(1 for s in samples if good(s)),
    )


def current_setting(config: ScoringConfig) -> Setting:
    return Setting(
        config.score_threshold_base, config.confidence_threshold_base, config.annual_sell_through
    )


def candidate_settings() -> list[Setting]:
    return [
        Setting(score, confidence, rate)
        for score in SCORE_BASES
        for confidence in CONFIDENCE_BASES
        for rate in SELL_THROUGH_RATES
    ]


def calibrate(
    samples: Sequence[Sample], config: ScoringConfig, target_precision: float
) -> dict[str, Any]:
    evaluations = [evaluate(samples, setting, config) for setting in candidate_settings()]
    reaching = [
        e
        for e in evaluations
        if e.precision is not None and e.precision >= target_precision - 1e-12
    ]
    best = max(
        reaching,
        key=lambda e: (e.good_recommended, e.recommended, e.setting.strictness()),
        default=None,
    )
    return {
        "sample_size": len(samples),
        "good_samples": sum(1 for s in samples if good(s)),
        "target_precision": target_precision,
        "current": evaluate(samples, current_setting(config), config).to_dict(),
        "best": best.to_dict() if best else None,
        "settings": None if best is None else settings_lines(best.setting),
        "candidates": [e.to_dict() for e in evaluations],
        "reaching": len(reaching),
    }


def settings_lines(setting: Setting) -> list[str]:
    return [f"SCORING_{name.upper()}={value:g}" for name, value in setting.to_dict().items()]
