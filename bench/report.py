"""Collecting per-run figures and rendering them as markdown tables."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from common import Sizes, median

DOMINUS = "dominus"
HUEY = "huey"
PROCRASTINATE = "procrastinate"
PGQUEUER = "pgqueuer"
NAMES = {DOMINUS: "DOMINUS", HUEY: "huey", PROCRASTINATE: "procrastinate", PGQUEUER: "pgqueuer"}

# `passes(ours, best_of_theirs)`: best_of_theirs is None when no other system has the figure.
Check = Callable[[float, float | None], bool]


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
    unit: str  # "jobs/s", "s", "ms", "%" or "ratio"
    target: str = ""
    passes: Check | None = None
    # What to print for another system that has no figure for this row (default "—").
    missing: dict[str, str] = field(default_factory=dict)


@dataclass
class Section:
    """One backend's tables: DOMINUS first, then the systems it is compared with."""

    title: str
    results: Results
    rows: list[Row]
    others: list[str]
    notes: list[str]
    extra: list[str] = field(default_factory=list)  # further markdown blocks


def at_least(threshold: float) -> Check:
    return lambda ours, _best: ours >= threshold


def below(threshold: float) -> Check:
    return lambda ours, _best: ours < threshold


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "jobs/s":
        return f"{value:,.0f}"
    if unit == "s":
        return f"{value:.2f}"
    if unit in ("ms", "%"):
        return f"{value:.1f}" if unit == "ms" else f"{value:.0f} %"
    return f"{value:.2f}"


def best_of(values: list[float], unit: str) -> float | None:
    """The better figure: the highest throughput, the lowest time."""
    if not values:
        return None
    return max(values) if unit == "jobs/s" else min(values)


def ratio_header(others: list[str]) -> str:
    if len(others) == 1:
        return f"DOMINUS/{NAMES[others[0]]}"
    return "DOMINUS ÷ better of the others"


def results_table(section: Section) -> str:
    results, others = section.results, section.others
    names = " | ".join(NAMES[system] for system in others)
    lines = [
        f"| Measurement | DOMINUS | {names} | {ratio_header(others)} | Target | Met |",
        "|---|---:|" + "---:|" * len(others) + "---:|---|:---:|",
    ]
    for row in section.rows:
        ours = results.median(row.key, DOMINUS)
        theirs = {system: results.median(row.key, system) for system in others}
        available = [value for value in theirs.values() if value is not None]
        best = best_of(available, row.unit)
        ratio = fmt(ours / best, "ratio") + "×" if ours is not None and best else "—"
        met = ""
        if row.passes is not None and ours is not None:
            met = "yes" if row.passes(ours, best) else "**no**"
        cells = [
            fmt(value, row.unit) if value is not None else row.missing.get(system, "—")
            for system, value in theirs.items()
        ]
        lines.append(
            f"| {row.label} | {fmt(ours, row.unit)} | {' | '.join(cells)} | {ratio} "
            f"| {row.target} | {met} |"
        )
    return "\n".join(lines)


def runs_table(section: Section) -> str:
    systems = [DOMINUS, *section.others]
    header = " | ".join(f"{NAMES[system]} runs" for system in systems)
    lines = [f"| Measurement | {header} |", "|---|" + "---|" * len(systems)]
    for row in section.rows:
        cells = []
        for system in systems:
            values = section.results.runs(row.key, system)
            cells.append(" / ".join(fmt(value, row.unit) for value in values) or "—")
        lines.append(f"| {row.label} | {' | '.join(cells)} |")
    return "\n".join(lines)


def document(environment: list[tuple[str, str]], sections: list[Section], repeats: int) -> str:
    info = dict(environment)
    heading = f"## {info['date']} — {info['CPU']} — `{info['command']}`"
    parts = [heading, "\n".join(f"- {name}: {value}" for name, value in environment)]
    runs = f"median of {repeats} run{'s' if repeats != 1 else ''}"
    for section in sections:
        parts += [
            f"### {section.title}: results ({runs})",
            results_table(section),
            f"#### {section.title}: per-run values",
            runs_table(section),
            *section.extra,
            f"#### {section.title}: notes",
            "\n".join(f"- {note}" for note in section.notes),
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


def _big(rows: int) -> str:
    return f"{rows / 1e6:g}M" if rows >= 1e6 else f"{rows:,}"


def _prefilled_rows(sizes: Sizes, prefilled: list[int]) -> list[Row]:
    big = _big(sizes.prefill_rows)
    rows = []
    for c in prefilled:
        rows += [
            Row(f"Drain, concurrency {c}, {big} finished rows (jobs/s)", f"drain1m_c{c}", "jobs/s"),
            Row(
                f"Drain, concurrency {c}, {big} finished rows: wall (s)", f"drain1m_c{c}_wall", "s"
            ),
            Row(
                f"Drain, concurrency {c}, empty table, run by run with the above (jobs/s)",
                f"drain1m_c{c}_empty",
                "jobs/s",
            ),
            Row(
                f"Drain, concurrency {c}, {big} finished rows ÷ empty table (same runs)",
                f"drain1m_c{c}_ratio",
                "ratio",
                "≥ 0.80 (cost < 20 %)",
                at_least(0.8),
            ),
        ]
    return rows


def sqlite_rows(sizes: Sizes, prefilled: list[int]) -> list[Row]:
    rows = [
        Row("Enqueue, single (jobs/s)", "enqueue_single", "jobs/s", "≥ 5,000", at_least(5000)),
        Row(
            f"Enqueue, batches of {sizes.batch_size:,} (jobs/s)",
            "enqueue_batched",
            "jobs/s",
            "≥ 50,000",
            at_least(50_000),
            missing={HUEY: "n/a (no batch API)"},
        ),
    ]
    for c in sizes.concurrencies:
        rows += [
            Row(
                f"Drain, concurrency {c} (jobs/s)",
                f"drain_c{c}",
                "jobs/s",
                "≥ 10,000",
                at_least(10_000),
            ),
            Row(f"Drain, concurrency {c}: wall time (s)", f"drain_c{c}_wall", "s"),
        ]
    rows += [
        Row("Pickup latency p50 (ms)", "latency_p50", "ms", "< 20", below(20)),
        Row("Pickup latency p95 (ms)", "latency_p95", "ms"),
        Row("Pickup latency p99 (ms)", "latency_p99", "ms", "< 50", below(50)),
    ]
    return rows + _prefilled_rows(sizes, prefilled)


def postgres_rows(sizes: Sizes, prefilled: list[int]) -> list[Row]:
    high = sizes.pg_concurrencies[-1]
    batch = sizes.pgqueuer_batch_size
    no_knob = {PGQUEUER: f"— (batch {batch} row)"}
    rows = [
        Row("Enqueue, single (jobs/s)", "enqueue_single", "jobs/s"),
        Row(
            f"Enqueue, batches of {sizes.batch_size:,} (jobs/s)",
            "enqueue_batched",
            "jobs/s",
            "≥ 40,000",
            at_least(40_000),
        ),
    ]
    for c in sizes.pg_concurrencies:
        label = f"Drain, 1 process, concurrency {c}"
        target, check = "", None
        if c == high:
            label += f" (pgqueuer: batch size {batch})"
            target = "≥ 2× the better of the others"
            check = _twice_the_best
        rows += [
            Row(
                f"{label} (jobs/s)",
                f"drain_c{c}",
                "jobs/s",
                target,
                check,
                missing={} if c == high else no_knob,
            ),
            Row(
                f"Drain, 1 process, concurrency {c}: wall time (s)",
                f"drain_c{c}_wall",
                "s",
                missing={} if c == high else no_knob,
            ),
        ]
    previous = None
    for p in sizes.processes:
        plural = "es" if p > 1 else ""
        rows.append(
            Row(
                f"Drain, {p} worker process{plural} × concurrency {sizes.process_concurrency}, "
                "warm start (jobs/s)",
                f"drain_p{p}",
                "jobs/s",
            )
        )
        if previous is not None:
            rows.append(
                Row(
                    f"Drain, {p} processes ÷ {previous}",
                    f"drain_p{p}_gain",
                    "ratio",
                    "> 1 until the database is the limit (CPU table)",
                    lambda ours, _best: ours > 1.0,
                )
            )
        previous = p
    rows += [
        Row("Pickup latency p50 (ms)", "latency_p50", "ms"),
        Row("Pickup latency p95 (ms)", "latency_p95", "ms"),
        Row("Pickup latency p99 (ms)", "latency_p99", "ms", "< 15", below(15)),
    ]
    return rows + _prefilled_rows(sizes, prefilled)


def _twice_the_best(ours: float, best: float | None) -> bool:
    return best is not None and ours >= 2 * best


def cpu_table(results: Results, drains: list[tuple[str, str]], systems: list[str]) -> str:
    """Worker and PostgreSQL CPU during each drain, as a share of one core over the drain's
    span; the machine's cores bound the sum."""
    lines = [
        "| Drain | " + " | ".join(f"{NAMES[s]} worker / PostgreSQL CPU" for s in systems) + " |",
        "|---|" + "---:|" * len(systems),
    ]
    for label, key in drains:
        cells = []
        for system in systems:
            worker = results.median(f"{key}_worker_cpu", system)
            db = results.median(f"{key}_db_cpu", system)
            cells.append(f"{fmt(worker, '%')} / {fmt(db, '%')}" if worker is not None else "—")
        lines.append(f"| {label} | {' | '.join(cells)} |")
    return "\n".join(lines)
