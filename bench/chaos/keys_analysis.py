"""What a chaos run with concurrency keys (ADR 0052) and a shared rate limiter (ADR 0053)
shows, from the same evidence as `analysis.py`: the handlers' execution log, the driver's kills,
the reaper's `reclaimed` events and the job rows at the end.

- a key above its limit (must be 0): at any instant, more executions of the key's jobs running
  than its limit. An execution runs from its `start` line to its `end`/`error` line; one cut
  short by a SIGKILL holds its slot (its row stays `running`) until the reaper reclaims that
  attempt, so its interval ends at the `reclaimed` event (without one: at the job's next start,
  which the reclaim comes before; without that: at the end of the run). An execution that was
  never killed and left no end runs to the end of the run. The executions are a lower bound of
  the key's `running` rows (a row is `running` from its claim, before its `start` line, to the
  write of its outcome, after its `end`), so any excess here was an excess in the database.
- a slot leaked (must be 0): at the end a key's job not `completed`, or a row of the key still
  `running`: a slot nobody holds would leave the key's jobs `pending` behind it.
- a limiter above its limit (must be 0): more grants of a key than its count in any window
  [x, x + period), in the times the grants were stamped with (the database's one clock, the
  clock ADR 0053's guarantee is stated in). Also given, in wall time: the most grants whose
  whole statement (the wall times just before and after it) fell inside one window, a count a
  real-time excess could not hide from.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis import Execution


@dataclass(frozen=True)
class Grant:
    key: str
    at: float  # the stamped time (database clock)
    before: float  # wall time just before the grant's statement
    after: float  # wall time just after it


@dataclass(frozen=True)
class Peak:
    """The most executions of one key running at once, when, and which jobs."""

    key: str
    limit: int
    most: int
    at: float | None
    jobs: tuple[int, ...]

    @property
    def over(self) -> bool:
        return self.most > self.limit


@dataclass
class KeyFindings:
    keyed_jobs: int = 0
    peaks: list[Peak] = field(default_factory=list)
    # How each killed execution's interval was closed: at the reclaim, at the next start, open.
    killed_until: dict[str, int] = field(default_factory=dict)
    leaked: dict[str, dict[str, int]] = field(default_factory=dict)  # key -> status -> count
    limited_jobs: int = 0
    grants: int = 0
    grant_limit: int = 0
    grant_period: float = 0.0
    grants_most_in_a_window: int = 0
    grants_most_in_a_window_at: float | None = None
    grants_most_in_a_wall_window: int = 0

    @property
    def keys_over_limit(self) -> list[Peak]:
        return [peak for peak in self.peaks if peak.over]

    @property
    def limiter_over_limit(self) -> bool:
        return self.grants_most_in_a_window > self.grant_limit

    def summary(self) -> dict[str, Any]:
        return {
            "keyed_jobs": self.keyed_jobs,
            "keys": {
                peak.key: {"limit": peak.limit, "most_running": peak.most} for peak in self.peaks
            },
            "keys_over_limit": len(self.keys_over_limit),
            "keys_over_limit_evidence": [
                {"key": peak.key, "limit": peak.limit, "running": peak.most, "at": peak.at}
                | {"jobs": list(peak.jobs)}
                for peak in self.keys_over_limit
            ],
            "killed_keyed_executions_until": self.killed_until,
            "slots_leaked": sum(sum(counts.values()) for counts in self.leaked.values()),
            "slots_leaked_by_key": self.leaked,
            "limited_jobs": self.limited_jobs,
            "grants": self.grants,
            "grant_limit": f"{self.grant_limit}/{self.grant_period:g}s",
            "grants_most_in_a_window": self.grants_most_in_a_window,
            "grants_most_in_a_window_at": self.grants_most_in_a_window_at,
            "grants_most_in_a_wall_window": self.grants_most_in_a_wall_window,
            "limiter_over_limit": self.limiter_over_limit,
        }


def read_grants(paths: Iterable[Path]) -> list[Grant]:
    grants = []
    for path in paths:
        for line in path.read_text().splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue  # empty, or cut by a SIGKILL mid-write
            if event.get("e") == "grant":
                grants.append(Grant(event["key"], event["at"], event["t0"], event["t1"]))
    return grants


def key_peaks(
    executions: Sequence[Execution],
    job_keys: Mapping[int, tuple[str, int]],
    kills: Mapping[int, float],
    reclaimed_at: Mapping[tuple[int, int], float],
    killed_until: dict[str, int] | None = None,
) -> list[Peak]:
    """`job_keys`: job id -> (key, limit) of every keyed job. One Peak per key."""
    intervals: dict[str, list[tuple[float, float, int]]] = defaultdict(list)
    starts: dict[int, list[float]] = defaultdict(list)
    for run in executions:
        starts[run.job].append(run.start)
    closed: dict[str, int] = defaultdict(int)
    for run in executions:
        if run.job not in job_keys:
            continue
        until, how = _held_until(run, kills, reclaimed_at, starts[run.job])
        closed[how] += 1
        intervals[job_keys[run.job][0]].append((run.start, until, run.job))
    if killed_until is not None:
        killed_until.update({how: count for how, count in closed.items() if how != "ended"})
    limits: dict[str, int] = {}
    for key, limit in job_keys.values():
        limits[key] = min(limit, limits.get(key, limit))
    return [_peak(key, limits[key], intervals.get(key, [])) for key in sorted(limits)]


def _held_until(
    run: Execution,
    kills: Mapping[int, float],
    reclaimed_at: Mapping[tuple[int, int], float],
    job_starts: Sequence[float],
) -> tuple[float, str]:
    if run.end is not None:
        return run.end, "ended"
    if run.pid not in kills:
        return math.inf, "never killed, no end"
    reclaimed = reclaimed_at.get((run.job, run.attempt))
    if reclaimed is not None:
        return reclaimed, "reclaimed"
    later = [start for start in job_starts if start > run.start]
    if later:
        return min(later), "next start"
    return math.inf, "open"


def _peak(key: str, limit: int, intervals: Sequence[tuple[float, float, int]]) -> Peak:
    """A sweep: ends before starts at one instant, so back-to-back runs do not overlap."""
    moments = sorted(
        [(start, 1, index) for index, (start, _, _) in enumerate(intervals)]
        + [(end, 0, index) for index, (_, end, _) in enumerate(intervals) if end != math.inf]
    )
    running: set[int] = set()
    most, at, jobs = 0, None, ()
    for moment, starting, index in moments:
        if starting:
            running.add(index)
            if len(running) > most:
                most, at = len(running), moment
                jobs = tuple(sorted(intervals[other][2] for other in running))
        else:
            running.discard(index)
    return Peak(key, limit, most, at, jobs)


def leaked_slots(
    job_keys: Mapping[int, tuple[str, int]], statuses: Mapping[int, str]
) -> dict[str, dict[str, int]]:
    """Per key, its jobs not `completed` at the end, by status (`running` rows hold a slot)."""
    leaked: dict[str, dict[str, int]] = {}
    for job, (key, _) in job_keys.items():
        status = statuses.get(job, "missing")
        if status != "completed":
            counts = leaked.setdefault(key, {})
            counts[status] = counts.get(status, 0) + 1
    return leaked


def most_in_a_window(times: Sequence[float], period: float) -> tuple[int, float | None]:
    """The most of `times` in any window [x, x + period), and the x of the first such window
    (a busiest window can always be moved to start at one of its times)."""
    ordered = sorted(times)
    most, at, first = 0, None, 0
    for last, moment in enumerate(ordered):
        while ordered[first] <= moment - period:
            first += 1
        if last - first + 1 > most:
            most, at = last - first + 1, ordered[first]
    return most, at


def most_wholly_in_a_wall_window(grants: Sequence[Grant], period: float) -> int:
    """The most grants whose statements lay wholly inside one window [x, x + period) of wall
    time: each grant happened somewhere in its statement, so these certainly shared a window."""
    ordered = sorted(grants, key=lambda grant: grant.before)
    most = 0
    for first, opening in enumerate(ordered):
        inside = 0
        for grant in ordered[first:]:
            if grant.before >= opening.before + period:
                break  # sorted by `before`: every later one starts after the window
            inside += grant.after < opening.before + period
        most = max(most, inside)
    return most


def analyse_keys(
    executions: Sequence[Execution],
    job_keys: Mapping[int, tuple[str, int]],
    statuses: Mapping[int, str],
    kills: Mapping[int, float],
    reclaimed_at: Mapping[tuple[int, int], float],
    grants: Sequence[Grant],
    limited: tuple[str, int, float, int],
) -> KeyFindings:
    """`limited`: the limiter's (key, count, period seconds, jobs that asked it)."""
    key, count, period, limited_jobs = limited
    findings = KeyFindings(keyed_jobs=len(job_keys), limited_jobs=limited_jobs)
    findings.peaks = key_peaks(executions, job_keys, kills, reclaimed_at, findings.killed_until)
    findings.leaked = leaked_slots(job_keys, statuses)
    mine = [grant for grant in grants if grant.key == key]
    findings.grants, findings.grant_limit, findings.grant_period = len(mine), count, period
    most, at = most_in_a_window([grant.at for grant in mine], period)
    findings.grants_most_in_a_window, findings.grants_most_in_a_window_at = most, at
    findings.grants_most_in_a_wall_window = most_wholly_in_a_wall_window(mine, period)
    return findings
