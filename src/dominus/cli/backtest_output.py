"""Printing the backtest report, tunes and calibrations as tables."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from dominus.backtest.figures import METRIC_LABELS, figure
from dominus.cli.output import console


def print_report(report: dict[str, Any]) -> None:
    comparison = report["comparison"]
    console.print(
        f"backtest: {report['sample_size']} sales from {report['first_sale'] or '-'} to "
        f"{report['last_sale'] or '-'} ({report['currency']}); "
        f"{report['baseline_coverage']} with a comparable-sales baseline"
    )
    table = Table(
        "metric",
        f"engine (all {report['sample_size']})",
        f"engine ({comparison['sample_size']} with baseline)",
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
            str(bucket["sample_size"]),
            figure("bias", bucket["mean_confidence"]),
            figure("mae", engine["mae"]),
            figure("within_50_percent", engine["within_50_percent"]),
            "-" if bucket["calibration_gap"] is None else f"{bucket['calibration_gap']:+.3f}",
            figure("conservative_share", engine["conservative_share"]),
        )
    console.print(buckets)
    walk = report["walk_forward"]
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
            fold["trained_before"],
            str(fold["train"]),
            str(fold["test"]),
            figure("mae", fold["mae_as_scored"]),
            figure("mae", fold["mae_current_weights"]),
            figure("mae", fold["mae_suggested_weights"]),
            f"{figure('mae', fold['mae_baseline'])} ({fold['baseline_sample']})",
        )
    console.print(folds)
    print_value_model(report["value_model"])


VALUE_HEADERS = ("", "n", "Spearman", "med |log10 err|", "within 2×", "R² log", "bias", "P10–P90")


def _value_cells(label: str, figures: dict[str, Any]) -> list[str]:
    def number(key: str, percent: bool = False) -> str:
        value = figures.get(key)
        if value is None:
            return "-"
        return f"{value:.0%}" if percent else f"{value:.2f}"

    return [
        label,
        str(figures["n"]),
        number("spearman"),
        number("median_abs_log10_error"),
        number("within_2x", percent=True),
        number("r2_log"),
        number("bias"),
        number("coverage", percent=True),
    ]


def print_value_model(section: dict[str, Any]) -> None:
    """The value model's ranges against the prices, as `dominus valuation evaluate` prints them."""
    title = (
        f"value model on {section['sample_size']} sales "
        f"({section['left_out']} scored without value ranges left out)"
    )
    table = Table(*VALUE_HEADERS, title=title)
    table.add_row(*_value_cells("all", section["overall"]))
    for group in ("by_band", "by_venue_class", "by_tld_group"):
        for key, figures in section[group].items():
            table.add_row(*_value_cells(key, figures))
    console.print(table)


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
    console.print(f"weights now:       {weights_line(result['weights_before'])}")
    console.print(f"weights suggested: {weights_line(result['weights_after'])}")
    for check in result["checks"]:
        console.print(
            f"  {'pass' if check['passed'] else 'FAIL'}  {check['name']}: {check['detail']}"
        )
    console.print(f"{result['decision']} (tune {result['tune_id']}, {result['sample_size']} sales)")


def print_calibration(result: dict[str, Any], top: int = 12) -> None:
    console.print(
        f"calibration on {result['sample_size']} sales ({result['good_samples']} sold at or above "
        f"their buy max); target precision {result['target_precision']:g}; "
        f"{result['reaching']} of {len(result['candidates'])} settings reach it"
    )
    table = Table(
        "score base", "confidence base", "sell-through", "recommended", "precision", "recall"
    )
    current = result["current"]
    reaching = [
        c
        for c in result["candidates"]
        if c["precision"] is not None and c["precision"] >= result["target_precision"] - 1e-12
    ]
    # the order calibrate() chooses in: most good names, most names, then the strictest
    reaching.sort(
        key=lambda c: (
            -c["good_recommended"],
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
