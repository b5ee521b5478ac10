"""Collecting per-run figures and rendering them as markdown tables."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from common import Sizes, median

DOMINUS = "dominus"
HUEY = "huey"


@dataclass
class Results:
    """Per-run values: key → system → one value per run."""

    samples: dict[str, dict[str, list[float]]] = field(default_factory=dict)

    def add(self, key: str, system: str, value: float) -> None:
        self.samples.setdefault(key, {}).setdefault(system, []).append(value)

    def runs(self, key: str, system: str) -> list[float]:
        return self.samples.get(key, {}).get(system, [])

    def median(self, key: str, system: str) -> float | None:
        values = self.runs(key, system)
        return median(values) if values else None


@dataclass(frozen=True)
class Row:
    label: str
    key: str
    unit: str  # "jobs/s", "s", "ms" or "ratio"
    target: str = ""
    passes: Callable[[float], bool] | None = None
    huey_missing: str = "—"


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "jobs/s":
        return f"{value:,.0f}"
    if unit == "s":
        return f"{value:.2f}"
    if unit == "ms":
        return f"{value:.1f}"
    return f"{value:.2f}"


def results_table(results: Results, rows: list[Row]) -> str:
    lines = [
        "| Measurement | DOMINUS | huey | DOMINUS/huey | Target | Met |",
        "|---|---:|---:|---:|---|:---:|",
    ]
    for row in rows:
        ours = results.median(row.key, DOMINUS)
        theirs = results.median(row.key, HUEY)
        ratio = fmt(ours / theirs, "ratio") + "×" if ours is not None and theirs else "—"
        met = ""
        if row.passes is not None and ours is not None:
            met = "yes" if row.passes(ours) else "**no**"
        huey_text = fmt(theirs, row.unit) if theirs is not None else row.huey_missing
        lines.append(
            f"| {row.label} | {fmt(ours, row.unit)} | {huey_text} | {ratio} | {row.target} "
            f"| {met} |"
        )
    return "\n".join(lines)


def runs_table(results: Results, rows: list[Row]) -> str:
    lines = ["| Measurement | DOMINUS runs | huey runs |", "|---|---|---|"]
    for row in rows:
        cells = []
        for system in (DOMINUS, HUEY):
            values = results.runs(row.key, system)
            cells.append(" / ".join(fmt(value, row.unit) for value in values) or "—")
        lines.append(f"| {row.label} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


def document(
    environment: list[tuple[str, str]],
    results: Results,
    rows: list[Row],
    repeats: int,
    notes: list[str],
) -> str:
    info = dict(environment)
    heading = f"## {info['date']} — {info['CPU']} — `{info['command']}`"
    parts = [
        heading,
        "\n".join(f"- {name}: {value}" for name, value in environment),
        f"### Results (median of {repeats} run{'s' if repeats != 1 else ''})",
        results_table(results, rows),
        "### Per-run values",
        runs_table(results, rows),
        "### Notes",
        "\n".join(f"- {note}" for note in notes),
    ]
    return "\n\n".join(parts) + "\n"


def append(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    existing = path.read_text() if path.exists() else ""
    if not existing.strip():
        existing = (
            "# DOMINUS benchmark results\n\n"
            "Newest entries at the end. See bench/README.md for what each figure means.\n"
        )
    path.write_text(existing.rstrip("\n") + "\n\n" + text)


def table_rows(sizes: Sizes, prefilled: list[int]) -> list[Row]:
    rows = [
        Row("Enqueue, single (jobs/s)", "enqueue_single", "jobs/s", "≥ 5,000", lambda v: v >= 5000),
        Row(
            f"Enqueue, batches of {sizes.batch_size:,} (jobs/s)",
            "enqueue_batched",
            "jobs/s",
            "≥ 50,000",
            lambda v: v >= 50_000,
            huey_missing="n/a (no batch API)",
        ),
    ]
    for c in sizes.concurrencies:
        rows += [
            Row(
                f"Drain, concurrency {c} (jobs/s)",
                f"drain_c{c}",
                "jobs/s",
                "≥ 10,000",
                lambda v: v >= 10_000,
            ),
            Row(f"Drain, concurrency {c}: wall time (s)", f"drain_c{c}_wall", "s"),
        ]
    rows += [
        Row("Pickup latency p50 (ms)", "latency_p50", "ms", "< 20", lambda v: v < 20),
        Row("Pickup latency p95 (ms)", "latency_p95", "ms"),
        Row("Pickup latency p99 (ms)", "latency_p99", "ms", "< 50", lambda v: v < 50),
    ]
    big = (
        f"{sizes.prefill_rows / 1e6:g}M" if sizes.prefill_rows >= 1e6 else f"{sizes.prefill_rows:,}"
    )
    for c in prefilled:
        rows += [
            Row(f"Drain, concurrency {c}, {big} finished rows (jobs/s)", f"drain1m_c{c}", "jobs/s"),
            Row(
                f"Drain, concurrency {c}, {big} finished rows: wall (s)", f"drain1m_c{c}_wall", "s"
            ),
            Row(
                f"Drain, concurrency {c}, {big} finished rows ÷ empty table",
                f"drain1m_c{c}_ratio",
                "ratio",
                "≥ 0.80 (cost < 20 %)",
                lambda v: v >= 0.8,
            ),
        ]
    return rows
