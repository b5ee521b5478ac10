"""The backtest report's metrics in words: their labels and how each figure is written, the
same for `dominus backtest report` and the dashboard's Backtest page."""

from __future__ import annotations

from typing import Any

METRIC_LABELS = {
    "mae": "MAE",
    "median_absolute_error": "median absolute error",
    "median_ape": "median abs. % error",
    "bias": "bias (Σ predicted ÷ Σ realised)",
    "bias_percent": "bias %",
    "within_50_percent": "within ±50 %",
    "r2_log": "R² (log prices)",
    "buy_max_hit_rate": "buy-max hit rate",
    "conservative_share": "predicted ≤ realised",
}
PERCENTAGES = {"median_ape", "within_50_percent", "buy_max_hit_rate", "conservative_share"}


def figure(name: str, value: Any, missing: str = "-") -> str:
    if value is None:
        return missing
    if name in PERCENTAGES:
        return f"{value * 100:.1f} %"
    if name == "bias_percent":
        return f"{value:+.1f} %"
    if name in {"bias", "r2_log"}:
        return f"{value:.3f}"
    return f"{value:,.2f}"
