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


def write_events(directory: Path, lines: list[dict[str, object]]) -> Path:
    """An events file as a chaos worker writes it, one JSON object a line."""
    path = directory / "events.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


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
    executions = analysis.read_executions([write_events(tmp_path, lines)])
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


@pytest.mark.backends("postgresql")
def test_chaos_smoke_with_keys_and_a_shared_limiter(backend: str, tmp_path: Path) -> None:
    """Half the jobs on four concurrency keys (limits 1, 2, 3, 5), a third asking one shared
    rate limiter, through the same kills and database trouble: no key above its limit, no slot
    leaked, the limiter never above its count in a window of its period. On PostgreSQL, whose
    claimers race for a key across connections (SQLite's claims are serialised by its write
    lock); the full harness runs with keys on both databases (bench/RESULTS.md)."""
    chaos = load("chaos")
    config = chaos.smoke_config(backend)
    config.keys = True
    config.out = tmp_path / "chaos"
    report = chaos.run_chaos(config)
    assert report["kills"] >= 1, report
    assert report["lost"] == 0, report
    assert report["overlapping"] == 0, report
    assert report["rerun_unexplained"] == 0, report
    assert report["keyed_jobs"] == config.jobs // 2
    assert report["keys_over_limit"] == 0, report["keys_over_limit_evidence"]
    assert report["slots_leaked"] == 0, report["slots_leaked_by_key"]
    assert report["grants"] >= report["limited_jobs"] > 0
    assert not report["limiter_over_limit"], report
    assert report["final_statuses"] == {"completed": config.jobs}


def test_the_key_analysis_finds_a_key_above_its_limit_and_holds_a_killed_slot() -> None:
    """A killed execution holds its slot until its attempt is reclaimed: a start before the
    reclaim is one too many for a limit of 1; a start after it is not."""
    keys = load("keys_analysis")
    run = load("analysis").Execution
    job_keys = {1: ("k", 1), 2: ("k", 1), 3: ("k", 1), 4: ("j", 2), 5: ("j", 2)}
    executions = [
        run(job=1, attempt=1, pid=10, worker="a", start=0.0, end=None),  # killed at 1.0
        run(job=2, attempt=1, pid=11, worker="b", start=4.0, end=5.0),  # before the reclaim
        run(job=3, attempt=1, pid=11, worker="b", start=7.0, end=8.0),  # after it
        run(job=4, attempt=1, pid=11, worker="b", start=0.0, end=2.0),
        run(job=5, attempt=1, pid=12, worker="c", start=2.0, end=3.0),  # touching: not over
    ]
    until: dict[str, int] = {}
    peaks = keys.key_peaks(executions, job_keys, {10: 1.0}, {(1, 1): 6.0}, until)
    assert [(peak.key, peak.most, peak.over) for peak in peaks] == [
        ("j", 1, False),
        ("k", 2, True),
    ]
    assert peaks[1].at == 4.0 and peaks[1].jobs == (1, 2)
    assert until == {"reclaimed": 1}
    # Reclaimed at 3.0 instead: job 2 started after the slot came back.
    peaks = keys.key_peaks(executions, job_keys, {10: 1.0}, {(1, 1): 3.0})
    assert [peak.most for peak in peaks] == [1, 1]


def test_the_key_analysis_finds_leaked_slots_and_a_limiter_above_its_limit(
    tmp_path: Path,
) -> None:
    keys = load("keys_analysis")
    leaked = keys.leaked_slots(
        {1: ("k", 1), 2: ("k", 1), 3: ("j", 2)}, {1: "completed", 2: "running", 3: "pending"}
    )
    assert leaked == {"k": {"running": 1}, "j": {"pending": 1}}
    # Three grants within one second, a fourth exactly a second after the first.
    assert keys.most_in_a_window([0.0, 0.5, 0.99, 1.0], 1.0) == (3, 0.0)
    assert keys.most_in_a_window([0.0, 1.0, 2.0], 1.0) == (1, 0.0)
    lines = [
        {"e": "grant", "key": "r", "slot": 1, "at": 0.0, "t0": 0.0, "t1": 0.1, "pid": 1},
        {"e": "start", "t": 0.0, "job": 1, "attempt": 1, "pid": 1, "worker": "w"},
        {"e": "grant", "key": "r", "slot": 2, "at": 0.5, "t0": 0.5, "t1": 1.2, "pid": 1},
    ]
    path = write_events(tmp_path, lines)
    with path.open("a") as events:
        events.write('{"e": "gra')  # a line cut by a SIGKILL
    grants = keys.read_grants([path])
    assert [grant.at for grant in grants] == [0.0, 0.5]
    # In wall time the second grant's statement ended past the first's window.
    assert keys.most_wholly_in_a_wall_window(grants, 1.0) == 1
    findings = keys.analyse_keys([], {}, {}, {}, {}, grants, ("r", 1, 1.0, 2))
    assert findings.limiter_over_limit and findings.grants_most_in_a_window == 2


def test_an_execution_ended_by_an_error_is_neither_running_nor_completed(tmp_path: Path) -> None:
    """A handler that raised (its limiter's database call failed) wrote `error`: its run ended
    there, it did not complete the job, and the job's next run is the retry of that attempt."""
    analysis = load("analysis")
    lines = [
        {"e": "start", "t": 1.0, "job": 7, "attempt": 1, "pid": 3, "worker": "w"},
        {"e": "error", "t": 1.5, "job": 7, "attempt": 1, "pid": 3, "worker": "w"},
        {"e": "start", "t": 2.0, "job": 7, "attempt": 2, "pid": 3, "worker": "w"},
    ]
    executions = analysis.read_executions([write_events(tmp_path, lines)])
    assert [(run.end, run.failed) for run in executions] == [(1.5, True), (None, False)]
    findings = analysis.analyse([7], {7: "completed"}, executions, {}, [])
    assert findings.lost == [7]
    assert findings.overlapping == []
    # The second run is the retry of the attempt that failed, not an unexplained rerun.
    assert findings.rerun_after_error == 1 and findings.rerun_unexplained == []
