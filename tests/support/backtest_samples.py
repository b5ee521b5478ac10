"""Samples built by hand for the backtest's unit tests."""

from __future__ import annotations

from datetime import date
from typing import Any

from dominus.backtest.samples import Sample


def sample(
    realised: float,
    predicted: float = 100.0,
    *,
    buy_max: float = 0.0,
    confidence: float = 0.4,
    baseline: float | None = None,
    sale_date: date = date(2026, 3, 1),
    domain: str = "example.com",
    **signals: Any,
) -> Sample:
    return Sample(
        domain=domain,
        sale_date=sale_date,
        realised=realised,
        predicted=predicted,
        buy_max=buy_max,
        confidence=confidence,
        weighted_score=0.5,
        signals={
            "intrinsic": signals.get("intrinsic", 0.5),
            "commercial": signals.get("commercial"),
            "market": signals.get("market"),
            "expiry": signals.get("expiry"),
        },
        baseline=baseline,
        baseline_sales=0 if baseline is None else 3,
        carrying_cost=signals.get("carrying_cost"),
        inputs=signals.get("inputs", {}),
    )
