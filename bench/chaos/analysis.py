"""What a chaos run shows, computed from what was recorded outside the database (the handlers'
execution log and the driver's log of what it did) and the job rows at the end.

- lost: jobs enqueued that did not end `completed`, or that are `completed` with no execution
  that reached its end in the log (must be 0);
- overlapping: pairs of executions of one job that ran at the same time (must be 0). An
  execution runs from its `start` line to its `end` (or `error`) line or, if it has none, to
  the SIGKILL of its process (a process that was never killed and left no `end` counts as
  running to the end of the run, so it overlaps anything after it);
- duplicate attempts: one (job, attempt) started twice (must be 0: one claim, one run), unless
  the database server crashed between the two starts: the hot path commits claims and
  completions asynchronously (ADR 0005), so a crash may forget a claim, and the job is claimed
  again under the same attempt number (counted apart, `after_server_crash`);
- jobs run more than once, each explained by what happened to the run before it: it raised
  (an `error` line: a handler's own database call, its rate limiter's, failed when its backend
  was terminated; the attempt failed and was retried, `after_error`), its process
  was SIGKILLed after it started (`after_kill`), or the database server was restarted in
  immediate mode (a crash: asynchronously committed outcomes may be lost, ADR 0005) while it
  was unrecorded (`after_server_crash`); anything else is `unexplained` (must be 0);
- reclaim: for an execution cut short by a SIGKILL, the time from the kill to the reaper's
  `reclaimed` event for that attempt (the job is pending again): bounded by the max running age
  plus the reclaim interval, plus the length of the latest database trouble (ADR 0026);
- recovery: for the same execution, the time from the kill to the start of the job's next
  execution: the reclaim, then the retry delay, then the wait in the queue. A reclaimed job is
  due at `now + retry delay`, so with a backlog it waits behind every job due earlier (the
  queue runs in `run_at` order): on a 20,000-job run that wait, not the reclaim, is most of it.
"""

from __future__ import annotations

import itertools
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Execution:
    job: int
    attempt: int
    pid: int
    worker: str
    start: float
    end: float | None  # None: no `end` (or `error`) line
    failed: bool = False  # ended by an `error` line: the handler raised, nothing completed


@dataclass
class Findings:
    jobs: int = 0
    executions: int = 0
    lost: list[int] = field(default_factory=list)
    overlapping: list[tuple[int, int, int]] = field(default_factory=list)  # (job, attempt, a2)
    duplicate_attempts: list[tuple[int, int]] = field(default_factory=list)
    duplicate_attempts_after_server_crash: list[tuple[int, int]] = field(default_factory=list)
    rerun_after_kill: int = 0
    rerun_after_server_crash: int = 0
    rerun_after_error: int = 0
    rerun_unexplained: list[int] = field(default_factory=list)
    recoveries: list[float] = field(default_factory=list)
    final_statuses: dict[str, int] = field(default_factory=dict)

    @property
    def jobs_run_more_than_once(self) -> int:
        explained = self.rerun_after_kill + self.rerun_after_server_crash + self.rerun_after_error
        return explained + len(self.rerun_unexplained)

    @property
    def longest_recovery(self) -> float | None:
        return max(self.recoveries) if self.recoveries else None

    def summary(self) -> dict[str, Any]:
        return {
            "jobs": self.jobs,
            "executions": self.executions,
            "lost": len(self.lost),
            "lost_ids": self.lost[:20],
            "overlapping": len(self.overlapping),
            "overlapping_examples": self.overlapping[:20],
            "duplicate_attempts": len(self.duplicate_attempts),
            "duplicate_attempts_after_server_crash": len(
                self.duplicate_attempts_after_server_crash
            ),
            "jobs_run_more_than_once": self.jobs_run_more_than_once,
            "rerun_after_kill": self.rerun_after_kill,
            "rerun_after_server_crash": self.rerun_after_server_crash,
            "rerun_after_error": self.rerun_after_error,
            "rerun_unexplained": len(self.rerun_unexplained),
            "rerun_unexplained_ids": self.rerun_unexplained[:20],
            "longest_recovery_seconds": self.longest_recovery,
            "killed_executions_recovered": len(self.recoveries),
            "final_statuses": self.final_statuses,
        }


def read_executions(paths: Iterable[Path]) -> list[Execution]:
    """Pair each `end` (or `error`) line with the earliest open `start` of the same job,
    attempt and process. Other lines (the limiters' `grant`s) are not executions.

    One process writes its file in order, so this is exact even when a process runs the same
    attempt twice (a claim lost in a server crash and made again): each run keeps its own end.
    """
    executions: list[dict[str, Any]] = []
    open_runs: dict[tuple[int, int, int], list[dict[str, Any]]] = defaultdict(list)
    for path in paths:
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by a SIGKILL mid-write (never fsync'd as a whole)
            if event["e"] not in ("start", "end", "error"):
                continue
            key = (event["job"], event["attempt"], event["pid"])
            if event["e"] == "start":
                started = {**event, "end": None, "failed": False}
                executions.append(started)
                open_runs[key].append(started)
            elif open_runs[key]:
                ended = open_runs[key].pop(0)
                ended["end"], ended["failed"] = event["t"], event["e"] == "error"
    return [
        Execution(
            job=event["job"],
            attempt=event["attempt"],
            pid=event["pid"],
            worker=event["worker"],
            start=event["t"],
            end=event["end"],
            failed=event["failed"],
        )
        for event in executions
    ]


def analyse(
    enqueued: Sequence[int],
    statuses: Mapping[int, str],
    executions: Sequence[Execution],
    kills: Mapping[int, float],
    server_crashes: Sequence[tuple[float, float]],
) -> Findings:
    """`kills`: pid → time of its SIGKILL. `server_crashes`: (went down, back up) of immediate
    restarts of the database server."""
    findings = Findings(jobs=len(enqueued), executions=len(executions))
    counts: dict[str, int] = defaultdict(int)
    for status in statuses.values():
        counts[status] += 1
    findings.final_statuses = dict(sorted(counts.items()))
    by_job: dict[int, list[Execution]] = defaultdict(list)
    for execution in executions:
        by_job[execution.job].append(execution)
    for job_id in enqueued:
        runs = sorted(by_job.get(job_id, []), key=lambda run: run.start)
        if statuses.get(job_id) != "completed" or not any(_completed(run) for run in runs):
            findings.lost.append(job_id)
        _check_job(job_id, runs, kills, server_crashes, findings)
    return findings


def reclaim_delays(
    executions: Sequence[Execution],
    kills: Mapping[int, float],
    reclaimed_at: Mapping[tuple[int, int], float],
) -> list[tuple[float, float, float]]:
    """For every execution cut short by a SIGKILL: (kill time, reclaim time, delay), the reclaim
    being the `reclaimed` event of that job and attempt (`reclaimed_at`: (job, attempt) → time).
    How soon the job was available again, whatever queue it then waited in."""
    found = []
    for run in executions:
        killed_at = kills.get(run.pid)
        if run.end is not None or killed_at is None or run.start > killed_at:
            continue
        at = reclaimed_at.get((run.job, run.attempt))
        if at is not None:
            found.append((killed_at, at, at - killed_at))
    return found


def reclaims_of_live_workers(
    executions: Sequence[Execution],
    kills: Mapping[int, float],
    reclaimed_at: Mapping[tuple[int, int], float],
) -> list[tuple[int, int]]:
    """(job, attempt) reclaimed while the process running it was alive and not yet killed:
    reclaims the dead-worker rescue must never make (a live worker's job run twice)."""
    found = []
    for run in executions:
        at = reclaimed_at.get((run.job, run.attempt))
        if at is None:
            continue
        killed_at = kills.get(run.pid)
        if killed_at is None or at < killed_at:
            found.append((run.job, run.attempt))
    return found


def percentile(values: Sequence[float], share: float) -> float | None:
    """The value below which `share` of `values` fall (nearest rank), or None when empty."""
    ordered = sorted(values)
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def reclaims_with_a_worker_up(
    executions: Sequence[Execution],
    kills: Mapping[int, float],
    reclaims: Sequence[tuple[float, float, float]],
) -> list[float]:
    """Each reclaim's delay counted from when a reaper could first have seen the job stale: the
    kill, or, when no surviving worker was up then, the first execution of one that was.

    The recovery bound assumes a live worker: kills every few seconds on a loaded machine, where
    a restarted worker takes seconds to import, can leave none for a while, and that wait is
    the driver's, not the reaper's. A worker counts as up from its first execution (its first
    tick, reaper pass included, comes before) if it was still alive at the reclaim; one killed
    in between is left out (an approximation: it may have been up when the job went stale).
    """
    first_execution: dict[int, float] = {}
    for run in executions:
        first_execution[run.pid] = min(first_execution.get(run.pid, math.inf), run.start)
    delays = []
    for killed_at, reclaimed, _ in reclaims:
        up_since = [
            max(killed_at, started)
            for pid, started in first_execution.items()
            if started <= reclaimed and kills.get(pid, math.inf) > reclaimed
        ]
        # None up before the reclaim: the reaper that took it did so on its first pass.
        origin = min(up_since, default=reclaimed)
        delays.append(reclaimed - origin)
    return delays


def _completed(run: Execution) -> bool:
    return run.end is not None and not run.failed


def _until(run: Execution, kills: Mapping[int, float]) -> float:
    if run.end is not None:
        return run.end
    return kills.get(run.pid, math.inf)


def _check_job(  # noqa: PLR0912
    job_id: int,
    runs: list[Execution],
    kills: Mapping[int, float],
    server_crashes: Sequence[tuple[float, float]],
    findings: Findings,
) -> None:
    first_of: dict[int, Execution] = {}
    for run in runs:
        earlier = first_of.get(run.attempt)
        if earlier is None:
            first_of[run.attempt] = run
        elif any(earlier.start <= down <= run.start for down, _ in server_crashes):
            # The server crashed between the two: the claim (and any outcome) committed
            # asynchronously before it was lost, and the job was claimed with that number again.
            # Not `up <= run.start`: the server takes claims before the driver's start command
            # returns (a rerun 0.1 s before "up" was seen).
            findings.duplicate_attempts_after_server_crash.append((job_id, run.attempt))
        else:
            findings.duplicate_attempts.append((job_id, run.attempt))
    for index, first in enumerate(runs):
        for second in runs[index + 1 :]:
            if second.start < _until(first, kills):
                findings.overlapping.append((job_id, first.attempt, second.attempt))
    if len(runs) < 2:
        return
    explained_by_error = explained_by_kill = explained_by_crash = unexplained = False
    for before, after in itertools.pairwise(runs):
        killed_at = kills.get(before.pid)
        if before.failed and before.end is not None and before.end <= after.start:
            explained_by_error = True  # a retry of the attempt the handler failed
        elif killed_at is not None and before.start <= killed_at <= after.start:
            explained_by_kill = True
            if before.end is None:  # cut short by the kill: measure how soon it ran again
                findings.recoveries.append(after.start - killed_at)
        elif any(before.start <= up and down <= after.start for down, up in server_crashes):
            explained_by_crash = True
        else:
            unexplained = True
    if unexplained:
        findings.rerun_unexplained.append(job_id)
    elif explained_by_kill:
        findings.rerun_after_kill += 1
    elif explained_by_crash:
        findings.rerun_after_server_crash += 1
    elif explained_by_error:
        findings.rerun_after_error += 1
