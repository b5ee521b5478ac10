"""The log of jobs taken back from other workers: a line each for the first few of a worker, one
line for the rest (a worker killed while holding jobs claimed ahead leaves up to a thousand)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from dominus.jobs.model import ReclaimedJob
from dominus.jobs.reaper import EACH_LOGGED, log_taken_back

DUE = datetime(2026, 12, 6, tzinfo=UTC)


def taken(job_id: int, worker: str, *, dead: bool = False) -> ReclaimedJob:
    return ReclaimedJob(job_id, "diag.noop", worker, 1, dead, DUE)


def test_a_line_each_for_a_few_and_one_line_for_the_rest(caplog: pytest.LogCaptureFixture) -> None:
    many = [taken(100 + n, "host:1:a", dead=n in (20, 30)) for n in range(EACH_LOGGED + 25)]
    few = [taken(7, "host:2:b"), taken(8, "host:2:b")]
    with caplog.at_level("WARNING", logger="dominus.worker"):
        log_taken_back(many + few, "rescued from dead worker")
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == EACH_LOGGED + 1 + 2
    assert lines[0] == "job 100 diag.noop rescued from dead worker host:1:a (attempt 1)"
    assert lines[EACH_LOGGED] == (
        f"25 more jobs rescued from dead worker host:1:a (ids {100 + EACH_LOGGED} to 134; "
        "2 of them dead-lettered, attempts exhausted): each has its reclaimed event"
    )
    assert lines[-2:] == [
        "job 7 diag.noop rescued from dead worker host:2:b (attempt 1)",
        "job 8 diag.noop rescued from dead worker host:2:b (attempt 1)",
    ]
