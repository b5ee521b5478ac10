"""The chaos harness (bench/chaos/) in its smoke size, on SQLite and PostgreSQL: a few hundred
jobs, three worker processes SIGKILLed and restarted every few seconds, the database troubled
(SQLite: the write lock held by another process; PostgreSQL: a throwaway server restarted twice,
once as a crash, and backends terminated). Nothing may be lost, no two executions of a job may
overlap, no attempt may run twice (but across a server crash, ADR 0005, counted apart), every
rerun must follow a kill or a server crash, and no row may be left `running`. The full run
(20,000 jobs) and its figures are in docs/reliability.md.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

CHAOS = Path(__file__).resolve().parents[2] / "bench" / "chaos"

pytestmark = [pytest.mark.slow, pytest.mark.backends("sqlite", "postgresql")]


def load(name: str) -> ModuleType:
    if str(CHAOS) not in sys.path:
        sys.path.insert(0, str(CHAOS))
    spec = importlib.util.spec_from_file_location(f"chaos_{name}", CHAOS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_chaos_smoke(backend: str, tmp_path: Path) -> None:
    chaos = load("chaos")
    config = chaos.smoke_config(backend)
    config.out = tmp_path / "chaos"
    report = chaos.run_chaos(config)
    summary = {key: report[key] for key in ("kills", "lost", "overlapping", "stuck_running")}
    assert report["kills"] >= 1, report
    assert report["worker_restarts"] == report["kills"]
    assert report["lost"] == 0, report
    assert report["overlapping"] == 0, report
    assert report["duplicate_attempts"] == 0, report
    assert report["rerun_unexplained"] == 0, report
    assert report["stuck_running"] == 0, report
    assert report["final_statuses"] == {"completed": config.jobs}, summary
    if backend == "postgresql":
        assert report["server_restarts"] == ["immediate", "fast"]
    else:
        assert report["write_locks_held"] >= 1


def test_the_analysis_finds_overlaps_losses_and_unexplained_reruns() -> None:
    """The harness's verdicts can fail: executions made up to break each rule."""
    analysis = load("analysis")
    run = analysis.Execution
    executions = [
        run(job=1, attempt=1, pid=10, worker="a", start=0.0, end=None),  # killed at 1.0
        run(job=1, attempt=2, pid=11, worker="b", start=5.0, end=6.0),  # rerun after the kill
        run(job=2, attempt=1, pid=11, worker="b", start=0.0, end=3.0),
        run(job=2, attempt=2, pid=12, worker="c", start=2.0, end=4.0),  # overlaps, unexplained
        run(job=3, attempt=1, pid=12, worker="c", start=0.0, end=1.0),  # completed, never ran?
        run(job=4, attempt=1, pid=12, worker="c", start=0.0, end=1.0),
        run(job=4, attempt=1, pid=13, worker="d", start=2.0, end=3.0),  # same attempt twice
    ]
    statuses = {1: "completed", 2: "completed", 3: "running", 4: "completed"}
    findings = analysis.analyse([1, 2, 3, 4], statuses, executions, {10: 1.0}, [])
    assert findings.lost == [3]
    assert findings.overlapping == [(2, 1, 2)]
    assert findings.duplicate_attempts == [(4, 1)]
    assert findings.rerun_after_kill == 1 and findings.recoveries == [4.0]
    assert findings.rerun_unexplained == [2, 4]


def test_an_attempt_started_again_after_a_server_crash_is_told_apart() -> None:
    analysis = load("analysis")
    run = analysis.Execution
    executions = [
        run(job=1, attempt=1, pid=10, worker="a", start=0.0, end=1.0),
        run(job=1, attempt=1, pid=11, worker="b", start=5.0, end=6.0),  # after the crash
        run(job=2, attempt=1, pid=10, worker="a", start=3.0, end=3.5),
        run(job=2, attempt=1, pid=11, worker="b", start=5.0, end=6.0),  # no crash between
        # Claimed again as the server came back, before the driver's start command returned.
        run(job=3, attempt=1, pid=10, worker="a", start=1.9, end=2.5),
        run(job=3, attempt=1, pid=10, worker="a", start=3.9, end=4.5),
    ]
    statuses = {1: "completed", 2: "completed", 3: "completed"}
    findings = analysis.analyse([1, 2, 3], statuses, executions, {}, [(2.0, 4.0)])
    assert findings.duplicate_attempts_after_server_crash == [(1, 1), (3, 1)]
    assert findings.duplicate_attempts == [(2, 1)]


def test_one_process_running_an_attempt_twice_is_two_executions_not_an_overlap(
    tmp_path: Path,
) -> None:
    """From a PostgreSQL run: the server crashed right after a claim and took it with it; the
    same worker claimed the job again after the restart, under the same attempt number. Each
    run keeps its own end, so the two do not overlap (they were reported as overlapping)."""
    analysis = load("analysis")
    lines = [
        {"e": "start", "t": 152.42, "job": 3486, "attempt": 1, "pid": 7, "worker": "w"},
        {"e": "end", "t": 152.52, "job": 3486, "attempt": 1, "pid": 7, "worker": "w"},
        {"e": "start", "t": 157.95, "job": 3486, "attempt": 1, "pid": 7, "worker": "w"},
        {"e": "end", "t": 158.13, "job": 3486, "attempt": 1, "pid": 7, "worker": "w"},
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    executions = analysis.read_executions([path])
    assert [(run.start, run.end) for run in executions] == [(152.42, 152.52), (157.95, 158.13)]
    findings = analysis.analyse([3486], {3486: "completed"}, executions, {}, [(152.45, 157.44)])
    assert findings.overlapping == []
    assert findings.duplicate_attempts_after_server_crash == [(3486, 1)]


def test_reclaim_delays_measure_from_the_kill_to_the_reclaimed_event() -> None:
    analysis = load("analysis")
    run = analysis.Execution
    executions = [
        run(job=1, attempt=1, pid=10, worker="a", start=0.0, end=None),  # killed at 2.0
        run(job=1, attempt=2, pid=11, worker="b", start=40.0, end=41.0),  # queued behind others
        run(job=2, attempt=1, pid=10, worker="a", start=1.0, end=1.5),  # finished before it
        run(job=3, attempt=1, pid=12, worker="c", start=0.0, end=None),  # never killed
    ]
    reclaimed = {(1, 1): 6.5, (2, 1): 9.0, (3, 1): 7.0}
    assert analysis.reclaim_delays(executions, {10: 2.0}, reclaimed) == [(2.0, 6.5, 4.5)]
    findings = analysis.analyse([1, 2, 3], {}, executions, {10: 2.0}, [])
    assert findings.recoveries == [38.0]  # to the next start: the reclaim plus the queue


def test_a_reclaim_is_timed_from_when_a_worker_was_up_to_reap_it() -> None:
    """Every worker was killed: the one that reclaimed the job came up 10 s after the kill, so
    the reaper's part of the 13 s is 3 s."""
    analysis = load("analysis")
    run = analysis.Execution
    executions = [
        run(job=1, attempt=1, pid=10, worker="a", start=0.0, end=None),  # killed at 1.0
        run(job=2, attempt=1, pid=11, worker="b", start=0.0, end=None),  # killed at 1.5
        run(job=3, attempt=1, pid=12, worker="c", start=11.0, end=11.2),  # restarted, up at 11
        run(job=4, attempt=1, pid=13, worker="d", start=0.5, end=0.7),  # up all along
    ]
    reclaims = [(1.0, 14.0, 13.0)]
    assert analysis.reclaims_with_a_worker_up(executions[:3], {10: 1.0, 11: 1.5}, reclaims) == [3.0]
    assert analysis.reclaims_with_a_worker_up(executions, {10: 1.0, 11: 1.5}, reclaims) == [13.0]
    # Reclaimed by a worker on its first tick, before its first execution: no wait of its own.
    assert analysis.reclaims_with_a_worker_up(executions[:2], {10: 1.0, 11: 1.5}, reclaims) == [0.0]
