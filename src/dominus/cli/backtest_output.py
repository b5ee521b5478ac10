"""Printing the backtest report, tunes and calibrations as tables."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from dominus.cli.output import console

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


def figure(name: str, value: Any) -> str:
    if value is None:
        return "-"
    if name in PERCENTAGES:
        return f"{value * 100:.1f} %"
    if name == "bias_percent":
        return f"{value:+.1f} %"
    if name in {"bias", "r2_log"}:
        return f"{value:.3f}"
    return f"{value:,.2f}"


def print_report(report: dict[str, Any]) -> None:
    comparison = report["comparison"]
    console.print(
        f"backtest: {report['sampleSize']} sales from {report['firstSale'] or '-'} to "
        f"{report['lastSale'] or '-'} ({report['currency']}); "
        f"{report['baselineCoverage']} with a comparable-sales baseline"
    )
    table = Table(
        "metric",
        f"engine (all {report['sampleSize']})",
        f"engine ({comparison['sampleSize']} with baseline)",
        "baseline",
        "better",
        title="engine vs the comparable-sales-only baseline",
    )
    for name, label in METRIC_LABELS.items():
        verdict = comparison["better"].get(name)
        table.add_row(
            label,
            figure(name, report["engine"][name]),
            figure(name, comparison["engine"][name]),
            figure(name, comparison["baseline"][name]),
            verdict or "-",
        )
    console.print(table)
    console.print(comparison["summary"])
    buckets = Table(
        "confidence",
        "sales",
        "mean confidence",
        "MAE",
        "within ±50 %",
        "calibration gap",
        "predicted ≤ realised",
        title="per confidence bucket (low < 0.3 ≤ mid < 0.6 ≤ high)",
    )
    for name, bucket in report["buckets"].items():
        engine = bucket["engine"]
        buckets.add_row(
            name,
            str(bucket["sampleSize"]),
            figure("bias", bucket["meanConfidence"]),
            figure("mae", engine["mae"]),
            figure("within_50_percent", engine["within_50_percent"]),
            "-" if bucket["calibrationGap"] is None else f"{bucket['calibrationGap']:+.3f}",
            figure("conservative_share", engine["conservative_share"]),
        )
    console.print(buckets)
    walk = report["walkForward"]
    folds = Table(
        "trained before",
        "train",
        "test",
        "MAE as scored",
        "MAE current weights",
        "MAE suggested weights",
        "MAE baseline",
        title="walk-forward (train on earlier sales, test on later ones)",
    )
    for fold in walk["folds"]:
        folds.add_row(
            fold["trainedBefore"],
            str(fold["train"]),
            str(fold["test"]),
            figure("mae", fold["maeAsScored"]),
            figure("mae", fold["maeCurrentWeights"]),
            figure("mae", fold["maeSuggestedWeights"]),
            f"{figure('mae', fold['maeBaseline'])} ({fold['baselineSample']})",
        )
    console.print(folds)


def weights_line(weights: dict[str, float]) -> str:
    return ", ".join(f"{name} {value:.4f}" for name, value in weights.items())


def print_tune(result: dict[str, Any]) -> None:
    table = Table("signal", "high", "low", "mean high", "mean low", "lift", "action")
    for signal in result["signals"]:
        table.add_row(
            signal["signal"],
            str(signal["high"]),
            str(signal["low"]),
            figure("mae", signal["mean_high"]),
            figure("mae", signal["mean_low"]),
            figure("mae", signal["lift"]),
            signal["action"],
        )
    console.print(table)
    console.print(f"weights now:       {weights_line(result['weightsBefore'])}")
    console.print(f"weights suggested: {weights_line(result['weightsAfter'])}")
    for check in result["checks"]:
        console.print(
            f"  {'pass' if check['passed'] else 'FAIL'}  {check['name']}: {check['detail']}"
        )
    console.print(f"{result['decision']} (tune {result['tuneId']}, {result['sampleSize']} sales)")


def print_calibration(result: dict[str, Any], top: int = 12) -> None:
    console.print(
        f"calibration on {result['sampleSize']} sales ({result['goodSamples']} sold at or above "
        f"their buy max); target precision {result['targetPrecision']:g}; "
        f"{result['reaching']} of {len(result['candidates'])} settings reach it"
    )
    table = Table(
        "score base", "confidence base", "sell-through", "recommended", "precision", "recall"
    )
    current = result["current"]
    reaching = [
        c
        for c in result["candidates"]
        if c["precision"] is not None and c["precision"] >= result["targetPrecision"] - 1e-12
    ]
    # the order calibrate() chooses in: most good names, most names, then the strictest
    reaching.sort(
        key=lambda c: (
            -c["goodRecommended"],
            -c["recommended"],
            -c["score_threshold_base"],
            -c["confidence_threshold_base"],
            c["annual_sell_through"],
        )
    )
    for row, label in [(current, " (current)")] + [(c, "") for c in reaching[:top]]:
        table.add_row(
            f"{row['score_threshold_base']:g}{label}",
            f"{row['confidence_threshold_base']:g}",
            f"{row['annual_sell_through']:g}",
            str(row["recommended"]),
            figure("within_50_percent", row["precision"]),
            figure("within_50_percent", row["recall"]),
        )
    console.print(table)
    if result["settings"]:
        console.print("settings to use:")
        for line in result["settings"]:
            console.print(f"  {line}")
    else:
        console.print("no setting reaches the target precision: keep the current thresholds")
