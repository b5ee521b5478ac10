"""The weight suggester: no machine learning, one small step per signal.

For each signal, the samples where it had a score are split at 0.5 (score ≥ 0.5: high);
lift = mean realised price of the high half − mean of the low half. A signal with at least 10
samples in each half and |lift| ≥ 50 (in the scoring currency) moves by 0.02 in the lift's
direction (up when high scores sold for more); every other signal holds. Each move is capped at
±0.05 per round, no weight goes below 0, and the result is renormalised to sum 1. The weights it
starts from are the current ones as shares of 1.

A signal with no evidence (None) is left out of its own split: no evidence is not a low score.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dominus.backtest.samples import Sample
from dominus.scoring.weighting import shares_of
from dominus.scoring.weights import SIGNALS, Weights

HIGH_SCORE = 0.5
MIN_PER_HALF = 10
MIN_LIFT = 50.0
STEP = 0.02
CAP = 0.05


@dataclass(frozen=True)
class SignalLift:
    signal: str
    high: int
    low: int
    mean_high: float | None
    mean_low: float | None
    lift: float | None
    action: str  # "up", "down" or "hold"
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "signal": self.signal,
            "high": self.high,
            "low": self.low,
            "mean_high": self.mean_high,
            "mean_low": self.mean_low,
            "lift": self.lift,
            "action": self.action,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Suggestion:
    sample_size: int
    before: Weights  # shares of 1
    after: Weights  # shares of 1
    lifts: tuple[SignalLift, ...]

    @property
    def deltas(self) -> dict[str, float]:
        return {name: getattr(self.after, name) - getattr(self.before, name) for name in SIGNALS}

    @property
    def changed(self) -> bool:
        return any(not math.isclose(delta, 0.0, abs_tol=1e-12) for delta in self.deltas.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "sample_size": self.sample_size,
            "weights_before": self.before.to_dict(),
            "weights_after": self.after.to_dict(),
            "deltas": self.deltas,
            "signals": [lift.to_dict() for lift in self.lifts],
        }


def signal_lift(
    signal: str,
    samples: Sequence[Sample],
    *,
    min_per_half: int = MIN_PER_HALF,
    min_lift: float = MIN_LIFT,
) -> SignalLift:
    scored = [(s.signals.get(signal), s.realised) for s in samples]
    high = [price for score, price in scored if score is not None and score >= HIGH_SCORE]
    low = [price for score, price in scored if score is not None and score < HIGH_SCORE]
    mean_high = statistics.fmean(high) if high else None
    mean_low = statistics.fmean(low) if low else None
    lift = mean_high - mean_low if mean_high is not None and mean_low is not None else None
    if len(high) < min_per_half or len(low) < min_per_half:
        reason = f"hold: {len(high)} high and {len(low)} low samples (at least {min_per_half} each)"
        return SignalLift(signal, len(high), len(low), mean_high, mean_low, lift, "hold", reason)
    assert lift is not None  # both halves are non-empty here
    if abs(lift) < min_lift:
        reason = f"hold: lift {lift:,.2f} is under {min_lift:,.0f}"
        return SignalLift(signal, len(high), len(low), mean_high, mean_low, lift, "hold", reason)
    action = "up" if lift > 0 else "down"
    reason = f"{action}: lift {lift:,.2f} over {len(high)} high and {len(low)} low samples"
    return SignalLift(signal, len(high), len(low), mean_high, mean_low, lift, action, reason)


def suggest(
    samples: Sequence[Sample],
    current: Weights,
    *,
    step: float = STEP,
    cap: float = CAP,
    min_per_half: int = MIN_PER_HALF,
    min_lift: float = MIN_LIFT,
) -> Suggestion:
    before = shares_of(current)
    lifts = tuple(
        signal_lift(name, samples, min_per_half=min_per_half, min_lift=min_lift) for name in SIGNALS
    )
    if all(lift.action == "hold" for lift in lifts):
        return Suggestion(len(samples), before, before, lifts)
    moved: dict[str, float] = {}
    for lift in lifts:
        move = {"up": step, "down": -step}.get(lift.action, 0.0)
        move = max(-cap, min(cap, move))
        moved[lift.signal] = max(0.0, getattr(before, lift.signal) + move)
    total = sum(moved.values())
    if total <= 0:  # every weight at 0: nothing sensible to suggest, keep the current ones
        return Suggestion(len(samples), before, before, lifts)
    after = Weights(**{name: value / total for name, value in moved.items()})
    return Suggestion(len(samples), before, after, lifts)
