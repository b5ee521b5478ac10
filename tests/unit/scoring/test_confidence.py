"""Confidence, from the reference formula as it was specified:

    covered = 0.30 + [0.35 if commercial] + [0.25 if market] + [0.10 if expiry]
    extra = max(0, covered − 0.30)
    signalConf = extra/0.70 × (0.8 − 0.2) × (1 − 0.12)          (= extra/0.70 × 0.528)
    qualityBoost = extra > 0 ? intrinsic × 0.12 × 0.6 : 0       (= intrinsic × 0.072)
    confidence = min(0.8, 0.2 + signalConf + qualityBoost)

Every expected value below is worked out by hand from that text, the arithmetic in a comment."""

from __future__ import annotations

from datetime import date

import pytest

from dominus.scoring import ScoringConfig, ScoringInput, Weights, score_domain
from dominus.scoring.confidence import Coverage, confidence

SHARES = Weights()  # the defaults already sum to 1

C, M, E = "commercial", "market", "expiry"


@pytest.mark.parametrize(
    ("signals", "intrinsic", "expected"),
    [
        # covered 0.30, extra 0: no signal part, no quality boost → 0.2
        ((), 0.9, 0.20),
        ((), 0.0, 0.20),
        # commercial: extra 0.35 → 0.35/0.70 × 0.6 × 0.88 = 0.264; boost 0.5 × 0.12 × 0.6 = 0.036
        # 0.2 + 0.264 + 0.036 = 0.50
        ((C,), 0.5, 0.50),
        # market: extra 0.25 → 0.25/0.70 × 0.528 = 0.188571…; boost 0 × 0.072 = 0
        ((M,), 0.0, 0.2 + 0.25 / 0.70 * 0.528),
        # expiry: extra 0.10 → 0.10/0.70 × 0.528 = 0.075428…; boost 1 × 0.072
        # 0.2 + 0.075429 + 0.072 = 0.347429
        ((E,), 1.0, 0.2 + 0.10 / 0.70 * 0.528 + 0.072),
        # commercial + expiry: extra 0.45 → 0.339429; boost 0.036 → 0.575429
        ((C, E), 0.5, 0.2 + 0.45 / 0.70 * 0.528 + 0.036),
        # commercial + market: extra 0.60 → 0.452571; boost 0.8 × 0.072 = 0.0576 → 0.710171
        ((C, M), 0.8, 0.2 + 0.60 / 0.70 * 0.528 + 0.0576),
        # everything, intrinsic 0.5: extra 0.70 → 0.528; boost 0.036 → 0.764
        ((C, M, E), 0.5, 0.764),
        # everything, intrinsic 1: min(0.8, 0.2 + 0.528 + 0.072) = min(0.8, 0.8) = 0.80
        ((C, M, E), 1.0, 0.80),
    ],
)
def test_reference_formula(signals: tuple[str, ...], intrinsic: float, expected: float) -> None:
    coverage = Coverage(commercial=C in signals, market=M in signals, expiry=E in signals)
    result = confidence(SHARES, coverage, intrinsic, ScoringConfig())
    assert result.value == pytest.approx(expected)
    assert result.value <= 0.8


def test_parts_are_reported() -> None:
    result = confidence(SHARES, Coverage(commercial=True), 0.5, ScoringConfig())
    # covered 0.30 + 0.35 = 0.65; extra 0.35; parts 0.264 and 0.036
    assert (result.covered, result.extra) == pytest.approx((0.65, 0.35))
    assert (result.signal_part, result.quality_part) == pytest.approx((0.264, 0.036))


@pytest.mark.parametrize(
    ("shares", "signals", "intrinsic", "expected"),
    [
        # intrinsic share 0.5: extra 0.5 → 0.5/(1 − 0.5) × 0.528 = 0.528; boost 0.036 → 0.764
        (Weights(0.5, 0.5, 0, 0), (C,), 0.5, 0.764),
        # all the weight on intrinsic: nothing else can cover anything → 0.2
        (Weights(1, 0, 0, 0), (C, M, E), 1.0, 0.20),
        # no intrinsic share: extra = covered = 0.6 → 0.6/1 × 0.528 = 0.3168; boost 0 → 0.5168
        (Weights(0, 0.6, 0.4, 0), (C,), 0.0, 0.5168),
    ],
)
def test_other_weights_generalise_the_intrinsic_share(
    shares: Weights, signals: tuple[str, ...], intrinsic: float, expected: float
) -> None:
    coverage = Coverage(commercial=C in signals, market=M in signals, expiry=E in signals)
    assert confidence(shares, coverage, intrinsic, ScoringConfig()).value == pytest.approx(expected)


def test_constants_come_from_the_config() -> None:
    config = ScoringConfig(
        confidence_base=0.1,
        confidence_cap=0.9,
        confidence_quality_share=0.2,
        confidence_quality_factor=0.5,
    )
    # commercial: 0.35/0.70 × (0.9 − 0.1) × (1 − 0.2) = 0.32; boost 1 × 0.2 × 0.5 = 0.1
    # 0.1 + 0.32 + 0.1 = 0.52
    assert confidence(SHARES, Coverage(commercial=True), 1.0, config).value == pytest.approx(0.52)
    # the cap binds: 0.2 + (0.7 − 0.2) × 0.88 + 0.072 = 0.712 → 0.7
    capped = ScoringConfig(confidence_cap=0.7)
    everything = Coverage(commercial=True, market=True, expiry=True)
    assert confidence(SHARES, everything, 1.0, capped).value == pytest.approx(0.7)


def test_a_name_with_nothing_but_itself_has_confidence_020() -> None:
    """The issue's cause 1: the old formula gave such a name 0.38."""
    score = score_domain(
        ScoringInput("cloudnest.com"), Weights(), ScoringConfig(), date(2025, 1, 1)
    )
    assert score.confidence == pytest.approx(0.20)
    assert not score.meets_thresholds


@pytest.mark.parametrize(
    "changes",
    [
        {"confidence_cap": 1.5},
        {"confidence_cap": 0.1, "confidence_base": 0.2},
        {"confidence_quality_share": 1.2},
        {"confidence_quality_factor": -0.1},
    ],
)
def test_out_of_range_constants_are_refused(changes: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        ScoringConfig(**changes)
