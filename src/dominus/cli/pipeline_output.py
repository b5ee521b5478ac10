"""Showing pipeline runs in a terminal: stage progress while waiting, recommendations after."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import takewhile
from typing import Any

from dominus.cli.candidate_tables import (
    recommendations_table,
    rejected_line,
    speculative_table,
)
from dominus.cli.output import console, errors, print_model
from dominus.cli.waiting import wait_until
from dominus.errors import InvalidInputError
from dominus.jobs.documents import dumped
from dominus.jobs.model import Job
from dominus.jobs.sql import SqlJobStore
from dominus.pipeline.documents import (
    CandidateOut,
    ListedCandidateOut,
    RunReportOut,
    effective_status,
    job_of_run,
)
from dominus.pipeline.listing import ListingQuery, listed_candidates
from dominus.pipeline.model import RunStatus
from dominus.pipeline.store import PipelineStore, RunRecord
from dominus.providers.gate_waits import describe_wait
from dominus.scoring import Tier

EXIT_FAILED_OR_DEGRADED = 1
EXIT_CANCELLED = 3
SAMPLE_DATA_NOTICE = "SAMPLE DATA: offline providers and bundled sample figures, not market data"
DEFAULT_TOP = 20  # rows of each table (recommended, speculative) a run's report shows
MAX_TOP = 100_000  # a run's most names


class OptionError(InvalidInputError):
    """An option's value is out of its range."""


def parse_top(value: str | None) -> int | None:
    """`--top K`: a whole number from 1 (read here, not by Typer, so a bad value is one line)."""
    if value is None:
        return None
    try:
        top = int(value)
    except ValueError:
        raise OptionError(f"--top must be a whole number from 1, got {value!r}") from None
    if not 1 <= top <= MAX_TOP:
        raise OptionError(f"--top must be from 1 to {MAX_TOP:,}, got {top}")
    return top


def wait_for_run(
    runs: PipelineStore, jobs: SqlJobStore, run_id: int, timeout: float | None
) -> RunRecord:
    """Poll the run (and its job) until it ends, printing each change of stage and progress.
    The timeout applies from the start, even while the run still waits for a worker."""

    def read() -> tuple[RunRecord, Job | None, RunStatus]:
        run = runs.get_run(run_id)
        job = job_of_run(jobs, run)
        return run, job, effective_status(run, job)

    run, _, _ = wait_until(
        read,
        lambda state: state[2] in (RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED),
        timeout=timeout,
        still=lambda state: f"run {run_id}: still {state[2].value}",
        line=lambda state, _seconds: progress_line(*state),
    )
    return run


def progress_line(run: RunRecord, job: Job | None, status: RunStatus) -> str:
    line = f"run {run.id}: {status.value}"
    progress = job.progress if job is not None and job.progress else None
    if status is RunStatus.RUNNING and progress and "stage" in progress:
        line += (
            f" — stage {progress.get('stage_number')}/{progress.get('stages')}"
            f" {progress['stage']} {progress.get('done')}/{progress.get('total')}"
        )
        waiting = describe_wait(progress)
        if waiting is not None:
            line += f", {waiting}"
    return line


def stage_progress_printer() -> Any:
    """A progress callback for in-process runs: a line per stage and every 10 %."""
    shown: dict[str, int] = {}

    def show(stage: Any, number: int, done: int, total: int) -> None:
        tenth = (10 * done // total) if total else 10
        if shown.get(stage.value) == tenth:
            return
        shown[stage.value] = tenth
        errors.print(f"stage {number}/5 {stage.value}: {done}/{total}")

    return show


def report_run(
    runs: PipelineStore,
    run: RunRecord,
    job: Job | None,
    *,
    as_json: bool,
    top: int = DEFAULT_TOP,
) -> int:
    """Print the run's outcome: the recommendations (the `top` best by expected profit), the
    speculative names apart, and the rejected ones counted by reason; return the exit code."""
    status = effective_status(run, job)
    recommended, speculative = tier_candidates(runs, run, top)
    if as_json:
        print_model(RunReportOut.of_tiers(run, job, recommended, speculative))
    else:
        print_run(run, status, recommended, speculative)
    if status is RunStatus.CANCELLED:
        return EXIT_CANCELLED
    if status is RunStatus.FAILED or run.degraded:
        return EXIT_FAILED_OR_DEGRADED
    return 0


def tier_candidates(
    runs: PipelineStore, run: RunRecord, top: int
) -> tuple[list[CandidateOut], list[CandidateOut]]:
    """The `top` best recommendations and the `top` best speculative names. The ranking lists
    the recommended first, then the speculative: those follow the recommended ones."""
    recommended = _scored(
        listed_candidates(runs, run, ListingQuery(recommended_only=True, top=top))
    )
    after = runs.count_scores(run.id, recommended_only=True)
    following = _scored(listed_candidates(runs, run, ListingQuery(offset=after, limit=top)))
    speculative = list(takewhile(lambda found: found.tier == Tier.SPECULATIVE.value, following))
    return recommended, speculative


def _scored(listed: Iterable[ListedCandidateOut]) -> list[CandidateOut]:
    """The scored candidates of a listing (one without `include_dropped` holds only those)."""
    return [candidate for candidate in listed if isinstance(candidate, CandidateOut)]


def print_run(
    run: RunRecord,
    status: RunStatus,
    recommended_candidates: list[CandidateOut],
    speculative_candidates: list[CandidateOut],
) -> None:
    recommended = [dumped(candidate) for candidate in recommended_candidates]
    speculative = [dumped(candidate) for candidate in speculative_candidates]
    summary = run.summary or {}
    if run.sample_data:
        console.print(f"[bold yellow]{SAMPLE_DATA_NOTICE}[/]")
    console.print(f"run {run.id}: {status.value}" + (" (DEGRADED)" if run.degraded else ""))
    for reason in run.degraded_reasons:
        console.print(f"  degraded: {reason}", markup=False)
    if run.error:
        console.print(f"  error: {run.error}", markup=False)
    if summary:
        console.print(
            f"  {summary.get('candidates', 0)} candidates ({summary.get('invalid', 0)} invalid, "
            f"{summary.get('duplicates', 0)} duplicates, "
            f"{summary.get('purchase_candidates', 0)} to buy from a listing); DNS available "
            f"{summary.get('dns', {}).get('available', 0)}; RDAP confirmed "
            f"{summary.get('rdap', {}).get('available', 0)}"
            f"{_sources(summary.get('availability_sources', {}))}; "
            f"scored {summary.get('scored', 0)}; "
            f"trademark {_counts(summary.get('trademark', {}))}; "
            f"recommended {summary.get('recommended', 0)}",
            markup=False,
        )
    total = int(summary.get("recommended", len(recommended)))
    if recommended:
        console.print(recommendations_table(recommended, "Recommended (by expected profit)"))
        if total > len(recommended):
            console.print(
                f"  the best {len(recommended)} of {total}; all of them: "
                f"dominus runs candidates {run.id} --recommended --limit {total}"
            )
    elif status is RunStatus.COMPLETED and run.degraded:
        # Not a finding: what was not checked (see "degraded" above) could not be recommended.
        console.print("  nothing recommended, but the run is degraded: see why above")
    elif status is RunStatus.COMPLETED:
        console.print("  nothing to recommend: conservative by design")
    if speculative:
        console.print(speculative_table(speculative))
    rejected = rejected_line(summary)
    if rejected is not None:
        console.print(f"  {rejected}", markup=False)
        console.print(f"  every candidate and its reason: dominus runs candidates {run.id} --all")


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in counts.items()) or "-"


def _sources(counts: dict[str, int]) -> str:
    """ " (whois 2, rdap 5)" when a source other than RDAP confirmed names, else nothing."""
    return f" ({_counts(counts)})" if set(counts) - {"rdap"} else ""
