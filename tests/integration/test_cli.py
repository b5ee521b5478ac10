"""The `dominus` command line against a per-test SQLite file, run through its real entry point
in process (tests/support/cli.py); as a real subprocess where a process runs on while the test
acts (`cli.start`: a live worker stopped by SIGTERM, a `jobs wait` a worker ends).

Every test asserts on the exit code, stdout/stderr and what ended up in the database (read
back through the `store` fixture). Jobs in finished states are produced in the test process
with the Python API (`JobQueue` on the real clock plus a burst `Worker`), or by `dominus worker
--burst` where the worker command itself is under test.

Exit codes under test: 0 ok, 1 a waited-for job failed, 2 bad input / un-migrated database /
invalid settings, 3 a waited-for job was cancelled, 75 queue full, 124 `jobs wait` timed out.
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import sqlite3
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest

from dominus.jobs import (
    HandlerRegistry,
    JobQueue,
    JobStatus,
    RetryPolicy,
    SqlJobStore,
    Worker,
    WorkerConfig,
    WorkerInfo,
    utc_now,
)
from dominus.pipeline.csv_export import cell, flatten
from dominus.pipeline.run_export import READABLE_COLUMNS
from dominus.schema.migrate import head_revision
from tests.support.cli import Cli, CliResult, assert_bad_input
from tests.support.fakes.rdap_server import FakeRdap, bootstrap_doc
from tests.support.polling import wait_until

T = TypeVar("T")


JOB_KEYS = {
    "id",
    "type",
    "status",
    "priority",
    "attempts",
    "max_attempts",
    "payload",
    "result",
    "last_error",
    "progress",
    "created_at",
    "run_at",
    "started_at",
    "finished_at",
    "locked_by",
}
DEAD_LETTER_KEYS = {"id", "job_id", "job_type", "attempts", "errors", "failed_at", "requeued_at"}
STATUSES = {"pending", "running", "completed", "failed", "cancelled"}

# Keep `dominus worker` retries fast: 10 ms base, 50 ms cap.
FAST_RETRIES = {"JOB_RETRY_BASE_MS": "10", "JOB_RETRY_MAX_MS": "50"}


# --- helpers ---------------------------------------------------------------------------------


def assert_utc_timestamp(value: Any) -> datetime:
    assert isinstance(value, str), value
    assert value.endswith("+00:00"), value
    parsed = datetime.fromisoformat(value)
    assert parsed.utcoffset() == timedelta(0)
    return parsed


def run_worker(
    store: SqlJobStore, registry: HandlerRegistry, clock: Callable[[], datetime] = utc_now
) -> None:
    """Run a burst worker in this process until nothing is due (retries immediate); it marks
    itself stopped, so it never counts as alive."""
    config = WorkerConfig(
        concurrency=4,
        poll_interval_seconds=0.05,
        retry_policy=RetryPolicy(base_seconds=0, max_seconds=0),
        burst=True,
    )
    Worker(store, registry, config, clock=clock).run()


@pytest.fixture
def make_cli(tmp_path: Path) -> Iterator[Callable[[str], Cli]]:
    """`make_cli(database_url)`: a runner on any database; kills what it left running."""
    runners: list[Cli] = []

    def make(database_url: str) -> Cli:
        workdir = tmp_path / f"cwd-{len(runners)}"
        workdir.mkdir()
        runners.append(Cli(workdir, database_url))
        return runners[-1]

    yield make
    for runner in runners:
        runner.kill_leftovers()


@pytest.fixture
def cli(make_cli: Callable[[str], Cli], database_url: str) -> Cli:
    """A runner on this test's migrated database."""
    return make_cli(database_url)


@pytest.fixture
def live_queue(store: SqlJobStore, registry: HandlerRegistry) -> JobQueue:
    """Enqueue on the real clock (the shared `queue` fixture's fake clock is in 2030, so its
    jobs would never be due for a real worker)."""
    return JobQueue(store, registry)


# --- database and settings -------------------------------------------------------------------


def test_unmigrated_database_is_refused_until_db_upgrade(
    make_cli: Callable[[str], Cli], tmp_path: Path
) -> None:
    path = tmp_path / "fresh" / "dominus.db"
    path.parent.mkdir()
    path.touch()  # an empty file: a database without the schema (a missing one is refused)
    runner = make_cli(f"sqlite:///{path}")
    *refused, current = runner.run_many(
        ("jobs", "list"),
        ("enqueue", "diag.noop", "--diagnostic-jobs"),
        ("queue", "stats", "--json"),
        ("worker", "--burst", "--diagnostic-jobs"),
        ("db", "current"),
    )
    for result in refused:
        assert_bad_input(result, "no DOMINUS schema", "run `dominus db upgrade`")
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT name FROM sqlite_master").fetchall() == []
    # `db current` only inspects: it says so instead of refusing.
    assert current.code == 0, str(current)
    assert "database: not migrated" in current.stdout

    upgraded = runner.ok("db", "upgrade")
    assert f"upgraded: empty → {head_revision()}" in upgraded.stdout
    again = runner.ok("db", "upgrade")
    assert f"is up to date (revision {head_revision()})" in again.stdout

    current = runner.ok("db", "current")
    assert current.stdout.strip() == (
        f"database: {head_revision()}; code expects: {head_revision()}"
    )
    stats = runner.ok("queue", "stats", "--json").json()
    assert stats["by_status"] == dict.fromkeys(STATUSES, 0)
    assert stats["dead_letter"] == 0
    assert stats["oldest_pending_age_seconds"] is None


def test_database_at_another_revision_is_refused(cli: Cli, database_path: Path) -> None:
    with sqlite3.connect(database_path) as connection:
        connection.execute("UPDATE alembic_version SET version_num = '0000_older'")
    line = assert_bad_input(cli.run("jobs", "list"), "0000_older", "dominus db upgrade")
    assert head_revision() in line


INVALID_SETTINGS = [
    ({"WORKER_CONCURRENCY": "0"}, ["WORKER_CONCURRENCY='0'", "allowed range: 1..256"]),
    (
        {"JOB_QUEUE_POLL_INTERVAL_MS": "1"},
        ["JOB_QUEUE_POLL_INTERVAL_MS='1'", "allowed range: 10..3600000"],
    ),
    (
        {"JOB_HEARTBEAT_INTERVAL_MS": "5000", "JOB_MAX_RUNNING_AGE_MS": "2000"},
        ["JOB_HEARTBEAT_INTERVAL_MS must be smaller than JOB_MAX_RUNNING_AGE_MS"],
    ),
    ({"DATABASE_URL": "mysql://localhost/dominus"}, ["DATABASE_URL", "mysql"]),
    (
        {"DATABASE_URL": "postgresql+psycopg://u@h:abc/db"},
        ["DATABASE_URL is not a valid database URL", "h:abc"],
    ),
]


@pytest.mark.parametrize(
    ("settings", "fragments"),
    INVALID_SETTINGS,
    ids=["concurrency-0", "poll-interval-1", "heartbeat-vs-age", "mysql", "port-not-a-number"],
)
def test_invalid_settings_exit_2_naming_the_variable(
    cli: Cli, store: SqlJobStore, settings: dict[str, str], fragments: list[str]
) -> None:
    # `db upgrade` skips the schema check, so only the settings can refuse it.
    assert_bad_input(cli.run("db", "upgrade", env=settings), *fragments)
    assert store.list_jobs() == []


# --- enqueue ---------------------------------------------------------------------------------


def test_enqueue_prints_the_job_id(cli: Cli, store: SqlJobStore) -> None:
    result = cli.ok("enqueue", "diag.noop", "--diagnostic-jobs")
    job_id = int(result.stdout.strip())
    assert result.stderr == ""
    job = store.get_job(job_id)
    assert job.status is JobStatus.PENDING
    assert job.job_type == "diag.noop"
    assert job.payload == {}
    assert job.attempts == 0
    assert job.max_attempts == 3  # the job type's default


def test_enqueue_json_prints_the_job_document(cli: Cli, store: SqlJobStore) -> None:
    result = cli.diag(
        "enqueue",
        "diag.sleep",
        "--payload",
        '{"seconds": 2}',
        "--priority",
        "7",
        "--max-attempts",
        "5",
        "--run-at",
        "2031-06-01T14:00:00+02:00",
        "--timeout",
        "30",
        "--json",
    )
    assert result.code == 0, str(result)
    document = result.json()
    assert set(document) >= JOB_KEYS
    assert document["type"] == "diag.sleep"
    assert document["status"] == "pending"
    assert document["priority"] == 7
    assert document["attempts"] == 0
    assert document["max_attempts"] == 5
    assert document["payload"] == {"seconds": 2.0}
    assert document["result"] is None
    assert document["last_error"] is None
    assert document["progress"] is None
    assert document["started_at"] is None
    assert document["finished_at"] is None
    assert document["locked_by"] is None
    assert document["timeout_seconds"] == 30
    created = assert_utc_timestamp(document["created_at"])
    assert abs((utc_now() - created).total_seconds()) < 60
    assert assert_utc_timestamp(document["run_at"]) == datetime(2031, 6, 1, 12, 0, tzinfo=UTC)
    assert document["created"] is True

    job = store.get_job(document["id"])
    assert (job.priority, job.max_attempts, job.timeout_seconds) == (7, 5, 30)
    assert job.run_at == datetime(2031, 6, 1, 12, 0, tzinfo=UTC)
    assert job.payload == {"seconds": 2.0}


def test_enqueue_with_dedupe_key_returns_the_active_job(cli: Cli, store: SqlJobStore) -> None:
    first = cli.diag("enqueue", "diag.noop", "--dedupe-key", "nightly")
    assert first.code == 0, str(first)
    second = cli.diag("enqueue", "diag.noop", "--dedupe-key", "nightly")
    assert second.code == 0, str(second)
    assert second.stdout.strip() == first.stdout.strip()
    assert "dedupe key 'nightly'" in second.stderr
    assert [job.id for job in store.list_jobs()] == [int(first.stdout)]

    # Once the holder is no longer active, the key is free again.
    cli.ok("jobs", "cancel", first.stdout.strip())
    third = cli.diag("enqueue", "diag.noop", "--dedupe-key", "nightly", "--json")
    assert third.code == 0, str(third)
    assert third.json()["created"] is True
    assert third.json()["id"] != int(first.stdout)
    assert len(store.list_jobs()) == 2


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["nope.type"], ["unknown job type 'nope.type'", "diag.noop"]),
        (["diag.noop", "--payload", "{bad"], ["--payload is not valid JSON"]),
        (["diag.sleep", "--payload", '{"seconds": "x"}'], ["diag.sleep", "seconds"]),
        (["diag.noop", "--payload", "[1, 2]"], ["must be a JSON object", "list"]),
        (["diag.noop", "--max-attempts", "0"], ["max_attempts", "1 and 1000"]),
        (["diag.noop", "--run-at", "2031-01-01T00:00:00"], ["--run-at", "UTC offset"]),
    ],
    ids=[
        "unknown-type",
        "invalid-json",
        "payload-field-type",
        "payload-not-object",
        "max-attempts-0",
        "run-at-without-offset",
    ],
)
def test_enqueue_bad_input_exits_2_and_writes_nothing(
    cli: Cli, store: SqlJobStore, args: list[str], fragments: list[str]
) -> None:
    assert_bad_input(cli.diag("enqueue", *args), *fragments)
    assert store.list_jobs() == []


def test_enqueue_more_bad_options_exit_2_and_write_nothing(cli: Cli, store: SqlJobStore) -> None:
    diag = "--diagnostic-jobs"
    cases = {
        # Without --diagnostic-jobs (or DOMINUS_DIAGNOSTIC_JOBS) the diag.* types do not exist.
        ("diag.noop",): [
            "unknown job type 'diag.noop'",
            "registered: BACKTEST_BUILD, BACKUP, PIPELINE_RUN, PORTFOLIO_RESCORE, PRUNE, "
            "RENEWAL_CHECK, WATCHLIST_POLL, WEIGHT_TUNE",
        ],
        ("diag.sleep", diag, "--payload", '{"seconds": 1, "extra": 2}'): ["extra"],
        ("diag.sleep", diag, "--payload", '{"seconds": -1}'): ["seconds", "greater than or equal"],
        ("diag.noop", diag, "--priority", "5000"): ["priority", "-1000 and 1000", "5000"],
        ("diag.noop", diag, "--run-at", "next tuesday"): ["--run-at", "ISO 8601"],
        ("diag.noop", diag, "--timeout", "0"): ["timeout", "between 0 and"],
        ("diag.noop", diag, "--dedupe-key", ""): ["dedupe_key", "1 to 300"],
    }
    results = cli.run_many(*(("enqueue", *args) for args in cases))
    for result, fragments in zip(results, cases.values(), strict=True):
        assert_bad_input(result, *fragments)
    assert store.list_jobs() == []


def test_enqueue_refuses_a_job_type_that_belongs_to_a_resource(
    cli: Cli, store: SqlJobStore, tmp_path: Path
) -> None:
    """PIPELINE_RUN is enqueued with its run (`dominus run`), never alone."""
    lines = tmp_path / "runs.jsonl"
    lines.write_text('{"run_id": 1}\n', encoding="utf-8")
    for source in (("--payload", '{"run_id": 1}'), ("--from-file", str(lines))):
        assert_bad_input(
            cli.run("enqueue", "PIPELINE_RUN", *source),
            "'PIPELINE_RUN' cannot be enqueued directly",
            "`dominus run`",
        )
    assert store.list_jobs() == []


def _write_lines(path: Path, count: int) -> list[str]:
    lines = [json.dumps({"seconds": index % 7}) for index in range(count)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return lines


def test_enqueue_from_file_creates_one_job_per_line(
    cli: Cli, store: SqlJobStore, tmp_path: Path
) -> None:
    path = tmp_path / "payloads.jsonl"
    _write_lines(path, 2500)
    result = cli.diag("enqueue", "diag.sleep", "--from-file", str(path), "--priority", "3")
    assert result.code == 0, str(result)
    assert result.stdout.strip() == "2500"
    jobs = sorted(store.list_jobs(limit=10_000), key=lambda job: job.id)
    assert len(jobs) == 2500
    assert [job.payload["seconds"] for job in jobs] == [float(i % 7) for i in range(2500)]
    assert {job.status for job in jobs} == {JobStatus.PENDING}
    assert {job.priority for job in jobs} == {3}


@pytest.mark.parametrize(
    ("bad_line", "fragments"),
    [
        ("{oops", ["line 1234", "not valid JSON"]),
        ('{"seconds": "x"}', ["line 1234", "seconds"]),
        ("[1]", ["line 1234", "must be a JSON object"]),
    ],
    ids=["invalid-json", "invalid-payload", "not-object"],
)
def test_enqueue_from_file_with_one_bad_line_writes_nothing(
    cli: Cli, store: SqlJobStore, tmp_path: Path, bad_line: str, fragments: list[str]
) -> None:
    path = tmp_path / "payloads.jsonl"
    lines = _write_lines(path, 2500)
    lines[1233] = bad_line  # line 1234, in the second batch of 1000
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert_bad_input(cli.diag("enqueue", "diag.sleep", "--from-file", str(path)), *fragments)
    assert store.list_jobs(limit=10_000) == []


def test_enqueue_from_file_is_all_or_nothing_when_the_queue_fills_up(
    cli: Cli, store: SqlJobStore, tmp_path: Path
) -> None:
    path = tmp_path / "payloads.jsonl"
    _write_lines(path, 2500)
    result = cli.diag(
        "enqueue", "diag.sleep", "--from-file", str(path), env={"JOB_QUEUE_MAX_DEPTH": "1500"}
    )
    assert result.code == 75, str(result)
    assert result.stdout == ""
    assert "JOB_QUEUE_MAX_DEPTH" in result.stderr_lines[-1]
    assert store.list_jobs(limit=10_000) == []


def test_enqueue_from_file_option_errors(cli: Cli, store: SqlJobStore, tmp_path: Path) -> None:
    path = tmp_path / "payloads.jsonl"
    _write_lines(path, 3)
    enqueue = ("enqueue", "diag.sleep", "--diagnostic-jobs", "--from-file")
    both, dedupe, missing = cli.run_many(
        (*enqueue, str(path), "--payload", "{}"),
        (*enqueue, str(path), "--dedupe-key", "k"),
        (*enqueue, str(tmp_path / "missing.jsonl")),
    )
    assert_bad_input(both, "either --payload or --from-file")
    assert_bad_input(dedupe, "--dedupe-key")
    assert_bad_input(missing, "cannot read", "missing.jsonl")
    assert store.list_jobs() == []


def test_enqueue_refuses_deep_json_in_one_line(
    cli: Cli, store: SqlJobStore, tmp_path: Path
) -> None:
    deep_objects = '{"a":' * 1_000 + "1" + "}" * 1_000  # parsed by json: RecursionError before
    deep_arrays = "[" * 100_000 + "]" * 100_000
    at_the_limit = '{"a":' * 64 + "1" + "}" * 64  # passes the depth check, fails the model
    lines = tmp_path / "deep.jsonl"
    lines.write_text('{"seconds": 1}\n' + deep_arrays + "\n", encoding="utf-8")
    enqueue = ("enqueue", "diag.sleep", "--diagnostic-jobs")
    from_file, payload, limit = cli.run_many(
        (*enqueue, "--from-file", str(lines)),
        (*enqueue, "--payload", deep_objects),
        (*enqueue, "--payload", at_the_limit),
    )
    assert_bad_input(from_file, "deep.jsonl line 2 is nested more than 64 levels deep")
    assert_bad_input(payload, "--payload is nested more than 64 levels deep")
    assert_bad_input(limit, "invalid payload for diag.sleep", "a: Extra inputs")
    assert store.list_jobs() == []


# --- jobs ------------------------------------------------------------------------------------


@pytest.fixture
def five_jobs(
    store: SqlJobStore, registry: HandlerRegistry, live_queue: JobQueue
) -> dict[str, int]:
    """1 completed noop, 2 failed (dead-lettered) fail, 3 pending sleep, 4 pending noop,
    5 cancelled noop."""
    completed = live_queue.enqueue_job("diag.noop").job_id
    failed = live_queue.enqueue_job("diag.fail", {"fail_times": 9}, max_attempts=1).job_id
    run_worker(store, registry)
    pending_sleep = live_queue.enqueue_job("diag.sleep", {"seconds": 1}).job_id
    pending_noop = live_queue.enqueue_job("diag.noop").job_id
    cancelled = live_queue.enqueue_job("diag.noop").job_id
    live_queue.cancel(cancelled)
    ids = {
        "completed": completed,
        "failed": failed,
        "pending_sleep": pending_sleep,
        "pending_noop": pending_noop,
        "cancelled": cancelled,
    }
    assert store.get_job(completed).status is JobStatus.COMPLETED
    assert store.get_job(failed).status is JobStatus.FAILED
    return ids


def test_jobs_list(cli: Cli, five_jobs: dict[str, int]) -> None:
    everything, filtered, limited, table, bogus = cli.run_many(
        ("jobs", "list", "--json"),
        ("jobs", "list", "--status", "pending", "--type", "diag.noop", "--json"),
        ("jobs", "list", "--limit", "2", "--json"),
        ("jobs", "list"),
        ("jobs", "list", "--status", "bogus"),
    )
    for result in (everything, filtered, limited, table):
        assert result.code == 0, str(result)

    documents = everything.json()
    assert [job["id"] for job in documents] == sorted(five_jobs.values(), reverse=True)
    for document in documents:
        assert set(document) >= JOB_KEYS
        assert_utc_timestamp(document["created_at"])
        assert_utc_timestamp(document["run_at"])
    by_id = {job["id"]: job for job in documents}
    assert {name: by_id[job_id]["status"] for name, job_id in five_jobs.items()} == {
        "completed": "completed",
        "failed": "failed",
        "pending_sleep": "pending",
        "pending_noop": "pending",
        "cancelled": "cancelled",
    }
    completed = by_id[five_jobs["completed"]]
    assert completed["result"] == {}
    assert completed["attempts"] == 1
    assert_utc_timestamp(completed["started_at"])
    assert_utc_timestamp(completed["finished_at"])

    assert [job["id"] for job in filtered.json()] == [five_jobs["pending_noop"]]
    assert [job["id"] for job in limited.json()] == [
        five_jobs["cancelled"],
        five_jobs["pending_noop"],
    ]

    for word in ("diag.noop", "diag.sleep", "diag.fail", "pending", "completed", "cancelled"):
        assert word in table.stdout
    assert "DeliberateFailureError" in table.stdout

    assert bogus.code == 2, str(bogus)
    assert "bogus" in bogus.stderr


def test_jobs_show(cli: Cli, five_jobs: dict[str, int]) -> None:
    failed_id = five_jobs["failed"]
    failed, pending, text, unknown = cli.run_many(
        ("jobs", "show", str(failed_id), "--json"),
        ("jobs", "show", str(five_jobs["pending_noop"]), "--json"),
        ("jobs", "show", str(failed_id)),
        ("jobs", "show", "999999"),
    )
    for result in (failed, pending, text):
        assert result.code == 0, str(result)

    document = failed.json()
    assert set(document) >= JOB_KEYS
    assert document["id"] == failed_id
    assert document["status"] == "failed"
    assert "DeliberateFailureError" in document["last_error"]
    kinds = [event["kind"] for event in document["events"]]
    assert "failed" in kinds
    assert kinds[-1] == "dead_lettered"
    for event in document["events"]:
        assert_utc_timestamp(event["at"])

    assert pending.json()["status"] == "pending"
    assert pending.json()["events"] == []

    assert "diag.fail" in text.stdout
    assert "dead_lettered" in text.stdout

    assert_bad_input(unknown, "no job with id 999999")


def test_jobs_cancel(cli: Cli, store: SqlJobStore, five_jobs: dict[str, int]) -> None:
    pending_id, completed_id = five_jobs["pending_noop"], five_jobs["completed"]
    pending, completed, unknown = cli.run_many(
        ("jobs", "cancel", str(pending_id)),
        ("jobs", "cancel", str(completed_id)),
        ("jobs", "cancel", "999999"),
    )
    assert pending.code == 0, str(pending)
    assert pending.stdout.strip() == f"job {pending_id} cancelled"
    job = store.get_job(pending_id)
    assert job.status is JobStatus.CANCELLED
    assert job.finished_at is not None
    assert [event.kind.value for event in store.job_events(pending_id)] == ["cancelled"]

    assert_bad_input(completed, "already completed")
    assert store.get_job(completed_id).status is JobStatus.COMPLETED
    assert_bad_input(unknown, "no job with id 999999")


def test_jobs_retry(cli: Cli, store: SqlJobStore, five_jobs: dict[str, int]) -> None:
    count = len(store.list_jobs())
    cancelled_id, failed_id = five_jobs["cancelled"], five_jobs["failed"]
    assert store.get_job(failed_id).attempts == 1
    cancelled, failed, completed = cli.run_many(
        ("jobs", "retry", str(cancelled_id)),
        ("jobs", "retry", str(failed_id)),
        ("jobs", "retry", str(five_jobs["completed"])),
    )
    assert cancelled.code == 0, str(cancelled)
    assert cancelled.stdout.strip() == f"job {cancelled_id} is pending again"
    job = store.get_job(cancelled_id)
    assert (job.status, job.attempts, job.finished_at) == (JobStatus.PENDING, 0, None)

    assert failed.code == 0, str(failed)
    job = store.get_job(failed_id)
    assert (job.status, job.attempts, job.locked_by) == (JobStatus.PENDING, 0, None)
    # Retrying a dead-lettered job closes its dead-letter entry.
    assert store.list_dead_letters() == []
    [entry] = store.list_dead_letters(include_requeued=True)
    assert entry.job_id == failed_id
    assert entry.requeued_at is not None
    assert len(store.list_jobs()) == count  # same ids, no new jobs

    assert_bad_input(completed, "only failed or cancelled jobs can be retried")
    assert store.get_job(five_jobs["completed"]).status is JobStatus.COMPLETED


# --- jobs wait -------------------------------------------------------------------------------


def test_jobs_wait_exit_codes(
    cli: Cli, store: SqlJobStore, registry: HandlerRegistry, live_queue: JobQueue
) -> None:
    completed = live_queue.enqueue_job("diag.noop").job_id
    failed = live_queue.enqueue_job("diag.fail", {"message": "boom"}, max_attempts=1).job_id
    cancelled = live_queue.enqueue_job("diag.noop").job_id
    live_queue.cancel(cancelled)
    run_worker(store, registry)
    pending = live_queue.enqueue_job("diag.noop").job_id  # no worker will run it

    # A wait that hung on a finished job would end at its timeout with 124, not its own code.
    results = cli.run_many(
        ("jobs", "wait", str(completed), "--timeout", "10"),
        ("jobs", "wait", str(failed), "--timeout", "10"),
        ("jobs", "wait", str(cancelled), "--timeout", "10"),
        ("jobs", "wait", str(pending), "--timeout", "0.5"),
        ("jobs", "wait", "999999", "--timeout", "1"),
    )
    on_completed, on_failed, on_cancelled, on_pending, on_unknown = results

    assert on_completed.code == 0, str(on_completed)
    assert f"job {completed} diag.noop: completed" in on_completed.stderr
    assert on_failed.code == 1, str(on_failed)
    assert f"job {failed} diag.fail: failed" in on_failed.stderr
    assert "last error: DeliberateFailureError: boom" in on_failed.stderr
    assert on_cancelled.code == 3, str(on_cancelled)
    assert f"job {cancelled} diag.noop: cancelled" in on_cancelled.stderr
    assert on_pending.code == 124, str(on_pending)
    assert f"job {pending}: still pending after 0.5 s" in on_pending.stderr
    assert_bad_input(on_unknown, "no job with id 999999")
    assert store.get_job(pending).status is JobStatus.PENDING


def test_jobs_wait_returns_when_a_worker_finishes_the_job(
    cli: Cli, live_queue: JobQueue, store: SqlJobStore, tmp_path: Path
) -> None:
    job_id = live_queue.enqueue_job("diag.sleep", {"seconds": 0.2}).job_id
    log = tmp_path / "wait.stderr"
    # A subprocess: it waits on while this test runs the worker.
    waiter = cli.start("jobs", "wait", str(job_id), "--timeout", "30", stderr=log)
    # Start the worker only once the waiter has seen the job pending.
    wait_until(lambda: "pending" in log.read_text(encoding="utf-8"), 20, "the waiter")
    cli.ok("worker", "--burst", "--diagnostic-jobs")
    waiter.wait(timeout=30)
    stderr = log.read_text(encoding="utf-8")
    assert waiter.returncode == 0, stderr
    assert f"job {job_id} diag.sleep: pending" in stderr
    assert f"job {job_id} diag.sleep: completed" in stderr
    assert store.get_job(job_id).result == {"slept_seconds": 0.2}


# --- worker ----------------------------------------------------------------------------------


def test_worker_burst_runs_everything_due(
    cli: Cli, store: SqlJobStore, live_queue: JobQueue
) -> None:
    noop = live_queue.enqueue_job("diag.noop").job_id
    sleep = live_queue.enqueue_job("diag.sleep", {"seconds": 0.2}).job_id
    flaky = live_queue.enqueue_job("diag.fail", {"fail_times": 1}).job_id
    broken = live_queue.enqueue_job(
        "diag.fail", {"fail_times": 99, "message": "always"}, max_attempts=2
    ).job_id
    later = live_queue.enqueue_job("diag.noop", run_at=utc_now() + timedelta(hours=1)).job_id

    result = cli.ok("worker", "--burst", "--diagnostic-jobs", env=FAST_RETRIES)
    assert "burst: nothing left to do" in result.stderr

    assert store.get_job(noop).status is JobStatus.COMPLETED
    assert store.get_job(sleep).result == {"slept_seconds": 0.2}
    flaky_job = store.get_job(flaky)
    assert (flaky_job.status, flaky_job.attempts) == (JobStatus.COMPLETED, 2)
    assert flaky_job.result == {"failures_before_success": 1}
    broken_job = store.get_job(broken)
    assert (broken_job.status, broken_job.attempts) == (JobStatus.FAILED, 2)
    later_job = store.get_job(later)
    assert (later_job.status, later_job.attempts) == (JobStatus.PENDING, 0)

    [entry] = store.list_dead_letters()
    assert entry.job_id == broken
    assert [error.attempt for error in entry.errors] == [1, 2]
    [worker] = store.list_workers()
    assert worker.stopped_at is not None


def test_worker_types_restricts_what_runs(
    cli: Cli, store: SqlJobStore, live_queue: JobQueue
) -> None:
    noop = live_queue.enqueue_job("diag.noop").job_id
    sleep = live_queue.enqueue_job("diag.sleep", {"seconds": 0}).job_id
    cli.ok("worker", "--burst", "--diagnostic-jobs", "--types", "diag.noop")
    assert store.get_job(noop).status is JobStatus.COMPLETED
    assert store.get_job(sleep).status is JobStatus.PENDING
    [worker] = store.list_workers()
    assert worker.job_types == ["diag.noop"]


def test_worker_refuses_unknown_types(cli: Cli, store: SqlJobStore) -> None:
    unknown, diagnostic = cli.run_many(
        ("worker", "--diagnostic-jobs", "--types", "unknown.type"),
        ("worker", "--burst", "--types", "diag.noop"),  # diag.* exist only on request
    )
    assert_bad_input(unknown, "unknown job type 'unknown.type'")
    assert_bad_input(diagnostic, "unknown job type 'diag.noop'")
    assert store.list_workers() == []


def test_live_worker_runs_cancels_and_stops_on_sigterm(cli: Cli, store: SqlJobStore) -> None:
    # A subprocess: it runs on while the test acts, and SIGTERM stops it.
    worker = cli.start(
        "worker",
        "--diagnostic-jobs",
        env={"JOB_QUEUE_POLL_INTERVAL_MS": "200", "JOB_HEARTBEAT_INTERVAL_MS": "200"},
    )
    wait_until(store.list_workers, 20, "the worker to register")

    sleeper = int(cli.diag("enqueue", "diag.sleep", "--payload", '{"seconds": 60}').stdout)
    wait_until(lambda: store.get_job(sleeper).status is JobStatus.RUNNING, 20, "the job to start")
    stats = cli.ok("queue", "stats", "--json").json()
    assert stats["workers_alive"] == 1
    assert stats["by_status"]["running"] == 1
    [listed] = stats["workers"]
    assert listed["id"] == store.list_workers()[0].id
    assert listed["job_types"] == [
        "BACKTEST_BUILD",
        "BACKUP",
        "PIPELINE_RUN",
        "PORTFOLIO_RESCORE",
        "PRUNE",
        "RENEWAL_CHECK",
        "WATCHLIST_POLL",
        "WEIGHT_TUNE",
        "diag.async_fail",
        "diag.async_noop",
        "diag.async_sleep",
        "diag.async_swallow_cancel",
        "diag.crash",
        "diag.fail",
        "diag.ignore_abort",
        "diag.noop",
        "diag.sleep",
    ]

    cancel = cli.ok("jobs", "cancel", str(sleeper))
    assert "cancel requested" in cancel.stdout
    waited = cli.run("jobs", "wait", str(sleeper), "--timeout", "20")
    assert waited.code == 3, str(waited)
    assert store.get_job(sleeper).status is JobStatus.CANCELLED

    worker.send_signal(signal.SIGTERM)
    _, stderr = worker.communicate(timeout=30)
    assert worker.returncode == 0, stderr
    assert "shutting down gracefully" in stderr
    [info] = store.list_workers()
    assert info.stopped_at is not None


# --- dead-letter queue -----------------------------------------------------------------------


def test_dlq_list_show_requeue_and_purge(
    cli: Cli, store: SqlJobStore, registry: HandlerRegistry
) -> None:
    # An entry from two days ago (queue and worker on a clock set back two days) ...
    def two_days_ago() -> datetime:
        return utc_now() - timedelta(days=2)

    old_job = (
        JobQueue(store, registry, clock=two_days_ago)
        .enqueue_job("diag.fail", {"message": "old"}, max_attempts=1)
        .job_id
    )
    run_worker(store, registry, clock=two_days_ago)
    # ... and a fresh one whose job failed twice.
    fresh_job = (
        JobQueue(store, registry)
        .enqueue_job("diag.fail", {"fail_times": 99, "message": "fresh"}, max_attempts=2)
        .job_id
    )
    run_worker(store, registry)
    old_entry, fresh_entry = sorted(store.list_dead_letters(), key=lambda entry: entry.id)
    assert (old_entry.job_id, fresh_entry.job_id) == (old_job, fresh_job)

    listed_result, shown_result, text_result, unknown = cli.run_many(
        ("dlq", "list", "--json"),
        ("dlq", "show", str(fresh_entry.id), "--json"),
        ("dlq", "show", str(fresh_entry.id)),
        ("dlq", "show", "999999"),
    )
    for result in (listed_result, shown_result, text_result):
        assert result.code == 0, str(result)
    listed = listed_result.json()
    assert [entry["id"] for entry in listed] == [fresh_entry.id, old_entry.id]
    for entry in listed:
        assert set(entry) >= DEAD_LETTER_KEYS
        assert_utc_timestamp(entry["failed_at"])
        assert entry["requeued_at"] is None
    document = listed[0]
    assert (document["job_id"], document["job_type"], document["attempts"]) == (
        fresh_job,
        "diag.fail",
        2,
    )
    assert [error["attempt"] for error in document["errors"]] == [1, 2]
    for error in document["errors"]:
        assert "DeliberateFailureError: fresh" in error["message"]
        assert error["traceback"].startswith("Traceback (most recent call last)")

    assert shown_result.json() == document
    text = text_result.stdout
    assert f"entry {fresh_entry.id}" in text
    assert "attempt 2" in text
    assert "Traceback" in text
    assert_bad_input(unknown, "no dead-letter entry with id 999999")

    requeued = cli.ok("dlq", "requeue", str(fresh_entry.id))
    assert requeued.stdout.strip() == f"job {fresh_job} is pending again"
    job = store.get_job(fresh_job)
    assert (job.status, job.attempts) == (JobStatus.PENDING, 0)
    assert store.get_dead_letter(fresh_entry.id).requeued_at is not None

    default, everything, twice = cli.run_many(
        ("dlq", "list", "--json"),
        ("dlq", "list", "--all", "--json"),
        ("dlq", "requeue", str(fresh_entry.id)),
    )
    assert [entry["id"] for entry in default.json()] == [old_entry.id]
    assert [entry["id"] for entry in everything.json()] == [fresh_entry.id, old_entry.id]
    assert_utc_timestamp(everything.json()[0]["requeued_at"])
    assert_bad_input(twice, "already requeued")
    assert store.get_job(fresh_job).status is JobStatus.PENDING

    purged = cli.ok("dlq", "purge", "--older-than-days", "1")
    assert purged.stdout.strip() == "purged 1 dead-letter entry"
    remaining = store.list_dead_letters(include_requeued=True)
    assert [entry.id for entry in remaining] == [fresh_entry.id]

    purged = cli.ok("dlq", "purge")
    assert purged.stdout.strip() == "purged 1 dead-letter entry"
    assert store.list_dead_letters(include_requeued=True) == []
    # The jobs themselves stay.
    assert store.get_job(old_job).status is JobStatus.FAILED


# --- queue stats -----------------------------------------------------------------------------


def test_queue_stats(cli: Cli, store: SqlJobStore, registry: HandlerRegistry) -> None:
    live = JobQueue(store, registry)
    live.enqueue_job("diag.noop")
    live.enqueue_job("diag.fail", max_attempts=1)
    run_worker(store, registry)  # 1 completed, 1 failed + dead-letter entry
    JobQueue(store, registry, clock=lambda: utc_now() - timedelta(seconds=90)).enqueue_job(
        "diag.noop"
    )
    live.enqueue_job("diag.noop")
    cancelled = live.enqueue_job("diag.noop").job_id
    live.cancel(cancelled)
    live.enqueue_job("diag.sleep")
    now = utc_now()
    store.register_worker(
        WorkerInfo(
            id="ghost",
            hostname="elsewhere",
            pid=1,
            concurrency=1,
            job_types=["diag.sleep"],
            started_at=now,
            last_seen_at=now,
        )
    )
    [running] = store.claim("ghost", ["diag.sleep"], 1, now)

    stats_result, text_result = cli.run_many(("queue", "stats", "--json"), ("queue", "stats"))
    assert stats_result.code == 0, str(stats_result)
    assert text_result.code == 0, str(text_result)
    stats = stats_result.json()
    assert stats["by_status"] == {
        "pending": 2,
        "running": 1,
        "completed": 1,
        "failed": 1,
        "cancelled": 1,
    }
    assert stats["dead_letter"] == 1
    assert stats["workers_alive"] == 1
    assert [worker["id"] for worker in stats["workers"]] == ["ghost"]
    assert 90 <= stats["oldest_pending_age_seconds"] < 150
    assert stats["by_type"]["diag.sleep"] == {"running": 1}

    text = text_result.stdout
    assert "dead-letter entries: 1" in text
    assert "workers alive: 1" in text
    assert "ghost" in text
    assert store.get_job(running.id).status is JobStatus.RUNNING


def test_queue_stats_latency_counts_only_due_jobs(
    cli: Cli, store: SqlJobStore, registry: HandlerRegistry
) -> None:
    """Enqueued two hours ago to run four hours later: pending for two hours, late for none."""
    two_hours_ago = utc_now() - timedelta(hours=2)
    JobQueue(store, registry, clock=lambda: two_hours_ago).enqueue_job(
        "diag.noop", run_at=two_hours_ago + timedelta(hours=4)
    )
    stats_result, text_result = cli.run_many(("queue", "stats", "--json"), ("queue", "stats"))
    stats = stats_result.json()
    assert stats["latency_seconds"] is None
    assert 7200 <= stats["oldest_pending_age_seconds"] < 7300
    assert "latency (oldest due job waiting): -" in text_result.stdout


# --- no tracebacks: every failure is one `error:` line --------------------------------------


def assert_one_line_error(result: CliResult, allowed_codes: tuple[int, ...] = (2,)) -> None:
    assert "Traceback" not in result.stderr, str(result)
    assert result.code in allowed_codes, str(result)


@pytest.mark.parametrize("case", ["not-a-database", "parent-is-a-file"])
def test_database_that_cannot_be_opened_is_a_one_line_error(
    make_cli: Callable[[str], Cli], tmp_path: Path, case: str
) -> None:
    if case == "not-a-database":
        path = tmp_path / "garbage.db"
        path.write_bytes(b"this is not a SQLite database, not at all; " * 50)
    else:
        plain_file = tmp_path / "plain-file"
        plain_file.write_text("x", encoding="utf-8")
        path = plain_file / "dominus.db"
    result = make_cli(f"sqlite:///{path}").run("jobs", "list")
    # 1 (database failure) or 2 (bad configuration): either way one `error:` line, no traceback.
    # A database failure logs the driver's own text at WARNING just before it (ADR 0011).
    assert_one_line_error(result, allowed_codes=(1, 2))
    assert result.stdout == ""
    *logged, last = result.stderr_lines
    assert last.startswith("error: "), str(result)
    assert all(" WARNING " in line for line in logged), str(result)


def test_a_job_id_beyond_int64_is_bad_input_not_a_crash(cli: Cli, store: SqlJobStore) -> None:
    assert_one_line_error(cli.run("jobs", "show", "99999999999999999999"))
    assert store.list_jobs() == []


def test_a_run_at_beyond_year_9999_in_utc_waits_for_the_calendars_end(
    cli: Cli, store: SqlJobStore
) -> None:
    """ADR 0027: a well-formed time past the calendar in UTC is its last instant, as in the API."""
    result = cli.run(
        "enqueue", "diag.noop", "--diagnostic-jobs", "--run-at", "9999-12-31T23:59:59-05:00"
    )
    assert result.code == 0, str(result)
    [job] = store.list_jobs()
    assert job.run_at == datetime.max.replace(tzinfo=UTC)


def test_dlq_purge_with_a_huge_age_is_not_a_crash(
    cli: Cli, store: SqlJobStore, registry: HandlerRegistry, live_queue: JobQueue
) -> None:
    live_queue.enqueue_job("diag.fail", max_attempts=1)
    run_worker(store, registry)
    [entry] = store.list_dead_letters()
    result = cli.run("dlq", "purge", "--older-than-days", "1000000")
    # "Older than a million days" matches nothing (exit 0, purged 0), or is refused (2).
    assert_one_line_error(result, allowed_codes=(0, 2))
    if result.code == 0:
        assert result.stdout.strip() == "purged 0 dead-letter entries"
    assert [kept.id for kept in store.list_dead_letters()] == [entry.id]


# --- the pipeline's commands that the e2e suite does not cover --------------------------------


def test_rdap_refresh_writes_a_checked_copy(cli: Cli, tmp_path: Path) -> None:
    server = FakeRdap()
    try:
        document = json.dumps(bootstrap_doc("https://rdap.example/", ["com", "net"])).encode()
        server.routes["/bootstrap.json"] = [
            (200, {"Content-Type": "application/json"}, document, 0)
        ]
        server.routes["/broken.json"] = [(200, {}, b'{"services": 5}', 0)]
        url = server.base.removesuffix("rdap/")
        target = tmp_path / "bootstrap.json"
        result = cli.ok("rdap", "refresh", "--url", f"{url}bootstrap.json", "--output", str(target))
        assert "2 TLDs" in result.stdout
        assert json.loads(target.read_text())["services"][0][0] == ["com", "net"]
        failed = cli.run("rdap", "refresh", "--url", f"{url}broken.json", "--output", str(target))
        assert failed.code == 2, str(failed)
        assert failed.stderr.startswith("error: ")
        assert json.loads(target.read_text())["services"][0][0] == ["com", "net"]  # kept
    finally:
        server.close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("run",), "at least one keyword"),
        (("run", "--sample", "-k", "x"), "--sample takes no other input"),
        (("run", "-k", "x", "--sync", "--wait"), "exclude each other"),
        (("run", "--closeout-csv", "missing.csv"), "missing.csv"),
    ],
)
def test_run_refuses_bad_input(cli: Cli, args: tuple[str, ...], message: str) -> None:
    result = cli.run(*args)
    assert result.code == 2, str(result)
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_run_recommends_no_invalid_a_label(cli: Cli) -> None:
    """`xn--a` and `xn--ls8h` (an emoji) were recommended as `.com` names."""
    result = cli.ok(
        "run", "-b", "xn--a,xn--ls8h", "--sync", "--json", env={"DOMINUS_PROVIDERS": "sample"}
    )
    document = json.loads(result.stdout)
    assert (document["summary"]["candidates"], document["summary"]["invalid"]) == (0, 2)
    assert document["recommendations"] == []


def test_run_reads_a_closeout_csv(cli: Cli, tmp_path: Path) -> None:
    csv_path = tmp_path / "closeouts.csv"
    csv_path.write_text("domain,age,backlinks,wayback\noldgardentools.com,12,300,90\nx-y.net,,,\n")
    result = cli.ok(
        "run",
        "--closeout-csv",
        str(csv_path),
        "--sync",
        "--json",
        env={"DOMINUS_PROVIDERS": "sample"},
    )
    document = json.loads(result.stdout)
    assert document["input"]["closeout"][0] == {
        "domain": "oldgardentools.com",
        "age": 12.0,
        "backlinks": 300,
        "wayback": 90,
        "price": None,
    }
    assert document["summary"]["candidates"] == 2
    bad = tmp_path / "bad.csv"
    bad.write_text("domain,age\nx.com,old\n")
    failed = cli.run("run", "--closeout-csv", str(bad))
    assert failed.code == 2
    assert "bad.csv" in failed.stderr and "line 2" in failed.stderr


def test_closeout_names_are_purchases_in_the_candidates_and_the_table(
    cli: Cli, tmp_path: Path
) -> None:
    """Listed names are bought, not registered: oldgardentools.com is registered (sample RDAP
    data) and still scored, marked as a purchase at its listed price in JSON and the table."""
    csv_path = tmp_path / "closeouts.csv"
    csv_path.write_text("domain,age,price\noldgardentools.com,17.5,1850\nquietkitchen.net,4,\n")
    offline = {"DOMINUS_PROVIDERS": "sample", "COLUMNS": "200"}
    ran = cli.ok("run", "--closeout-csv", str(csv_path), "--sync", "--json", env=offline).json()
    assert ran["input"]["closeout"][0]["price"] == 1850.0
    assert ran["summary"]["purchase_candidates"] == 2
    run_id = str(ran["run_id"])
    listed = cli.ok("runs", "candidates", run_id, "--json").json()
    assert {(c["domain"], c["acquisition"], c["listed_price"]) for c in listed} == {
        ("oldgardentools.com", "purchase", 1850.0),
        ("quietkitchen.net", "purchase", None),
    }
    table = cli.ok("runs", "candidates", run_id, env={"COLUMNS": "200"}).stdout
    assert "acquire" in table
    assert "buy at 1,850" in table and "buy (no price)" in table


def test_runs_list_counts_inputs_and_a_run_takes_at_most_100000_names(
    cli: Cli, tmp_path: Path
) -> None:
    offline = {"DOMINUS_PROVIDERS": "sample"}
    ran = cli.ok("run", "-k", "home gym,meal prep", "-b", "zentrova", "--json", env=offline)
    [listed] = cli.ok("runs", "list", "--json").json()
    assert listed["run_id"] == ran.json()["run_id"]
    assert "input" not in listed
    assert listed["input_summary"] == {"keywords": 2, "brandable": 1, "closeout": 0}
    shown = cli.ok("runs", "show", str(listed["run_id"]), "--json").json()
    assert shown["input"]["keywords"] == ["home gym", "meal prep"]
    names = ",".join(["a"] * 40_000)  # one argument may hold at most 128 KiB
    too_many = cli.run("run", "-k", names, "-b", names, "-c", names, env=offline)
    assert_bad_input(too_many, "at most 100,000 names in all, got 120,000")
    assert len(cli.ok("runs", "list", "--json").json()) == 1


CLOSEOUT_CASES = {
    "nul-in-domain": (b"domain,age\nab\x00c.com,3\n", "line 2: contains a NUL character"),
    "age-over-200": (
        b"domain,age\nabc.com,250\n",
        "line 2: age: Input should be less than or equal to 200",
    ),
    "huge-backlinks": (
        b"domain,backlinks\nabc.com," + b"1" + b"0" * 30 + b"\n",
        "line 2: backlinks:",
    ),
    "domain-over-300": (
        b"domain\n" + b"a" * 301 + b".com\n",
        "line 2: domain: String should have at most 300",
    ),
    "field-over-128-kib": (
        b'domain,age\n"' + b"a" * 140_000 + b'",1\n',
        "line 2: a field is longer than 131,072",
    ),
    "unbalanced-quote": (b'domain\nok.com\n"abc.com\n', "line 3: a quote is not closed"),
    "unbalanced-quote-2-columns": (
        b'domain,age\n"abc.com,3\nxyz.com,4\n',
        "line 2: a quote is not closed",
    ),
    "text-after-quote": (b'domain\n"abc".com\n', "line 2: text after the closing quote"),
    "price-over-cap": (
        b"domain,price\nabc.com,2e9\n",
        "line 2: price '2e9' must be at most 1,000,000,000",
    ),
    "not-utf-8": (b"domain\nok.com\nab\xffc.com\n", "line 3: not UTF-8 text"),
}


def test_run_refuses_a_bad_closeout_csv_with_one_line_naming_the_line(
    cli: Cli, tmp_path: Path
) -> None:
    commands = []
    for name, (content, _) in CLOSEOUT_CASES.items():
        path = tmp_path / f"{name}.csv"
        path.write_bytes(content)
        commands.append(("run", "--closeout-csv", str(path), "--sync"))
    too_long = "a" * 400
    commands.append(("run", "-c", too_long, "--sync"))
    commands.append(("run", "-k", f"gym,{too_long}", "--sync"))
    results = cli.run_many(*commands, timeout=60)
    csv_results = results[: len(CLOSEOUT_CASES)]
    for result, (name, (_, fragment)) in zip(csv_results, CLOSEOUT_CASES.items(), strict=True):
        assert_bad_input(result, f"{name}.csv, {fragment}")
    assert_bad_input(results[-2], "invalid run input: domain: String should have at most 300")
    assert_bad_input(results[-1], "invalid run input: keywords.1: String should have at most 300")
    assert cli.ok("runs", "list", "--json").json() == []


def test_enqueue_from_a_file_that_is_not_utf8_names_the_line(
    cli: Cli, store: SqlJobStore, tmp_path: Path
) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"seconds": 1}\n{"message": "caf\xe9"}\n')
    result = cli.diag("enqueue", "diag.sleep", "--from-file", str(path))
    assert_bad_input(result, "latin1.jsonl line 2 is not UTF-8 text")
    assert store.list_jobs() == []


# --- what a run shows: tiers, ranking, --top, --all, --csv ----

OFFLINE_WIDE = {"DOMINUS_PROVIDERS": "sample", "COLUMNS": "200"}
SPECULATIVE_TITLE = (
    "Speculative (name only, no market/keyword/expiry evidence: not recommendations)"
)


def test_a_sample_run_shows_the_three_tiers_apart(cli: Cli) -> None:
    shown = cli.ok("run", "--sample", "--sync", env=OFFLINE_WIDE).stdout
    document = cli.ok("runs", "candidates", "1", "--json").json()
    ran = cli.ok("run", "--sample", "--sync", "--json", env=OFFLINE_WIDE).json()
    summary = ran["summary"]
    tiers = summary["tiers"]
    # The sample data shows all three: a handful recommended, well under half of the scored.
    assert 3 <= tiers["recommended"] <= 6, tiers
    assert tiers["recommended"] < summary["scored"] / 2
    assert tiers["speculative"] >= 3 and tiers["rejected"] >= 3, tiers
    assert sum(tiers.values()) == summary["scored"]
    assert {"trademark: blocked", "negative expected profit", "no listed price"} <= set(
        summary["rejected_reasons"]
    )
    # Recommendations by expected profit, each with its evidence; speculative ones apart.
    recommendations = ran["recommendations"]
    assert len(recommendations) == tiers["recommended"]
    profits = [item["expected_profit"] for item in recommendations]
    assert profits == sorted(profits, reverse=True)
    assert all(item["tier"] == "recommended" and item["evidence"] for item in recommendations)
    assert all(item["tier_reason"].startswith("every gate passes") for item in recommendations)
    assert len(ran["speculative"]) == tiers["speculative"]
    assert all(item["tier"] == "speculative" for item in ran["speculative"])
    assert all(item["evidence"] is None for item in ran["speculative"])
    # The table: recommendations first (same order), the speculative table, the rejected count.
    recommended_at = shown.index("Recommended (by expected profit)")
    speculative_at = shown.index(SPECULATIVE_TITLE)
    rejected_at = shown.index(f"rejected {tiers['rejected']}: ")
    assert recommended_at < speculative_at < rejected_at
    positions = [shown.index(f"│ {item['domain']} ") for item in recommendations]
    assert positions == sorted(positions) and positions[-1] < speculative_at
    for item in ran["speculative"]:
        assert speculative_at < shown.index(f"│ {item['domain']} ") < rejected_at
    assert recommendations[0]["evidence"] in shown
    # `runs candidates` ranks the same way: recommended, speculative, rejected.
    assert [c["tier"] for c in document][: tiers["recommended"]] == ["recommended"] * tiers[
        "recommended"
    ]
    assert [c["domain"] for c in document][: len(recommendations)] == [
        item["domain"] for item in recommendations
    ]


def test_top_shows_the_best_k_and_a_bad_k_is_one_line(cli: Cli) -> None:
    ran = cli.ok("run", "--sample", "--sync", "--json", "--top", "2", env=OFFLINE_WIDE).json()
    assert len(ran["recommendations"]) == 2
    assert len(ran["speculative"]) == 2
    everything = cli.ok("runs", "candidates", "1", "--json").json()
    assert ran["recommendations"] == everything[:2]
    top = cli.ok("runs", "candidates", "1", "--json", "--top", "3").json()
    assert top == everything[:3]
    table = cli.ok("run", "--sample", "--sync", "--top", "1", env=OFFLINE_WIDE).stdout
    assert f"the best 1 of {ran['summary']['recommended']}" in table
    bad = cli.run_many(
        ("runs", "candidates", "1", "--top", "0"),
        ("runs", "candidates", "1", "--top", "x"),
        ("runs", "candidates", "1", "--top=-3"),
        ("runs", "candidates", "1", "--top", "100001"),
        ("run", "-k", "home gym", "--sync", "--top", "0"),
    )
    for result in bad:
        assert_bad_input(result, "--top must be")


def test_runs_candidates_all_lists_what_was_dropped_and_why(cli: Cli) -> None:
    cli.ok(
        "run",
        "-k",
        "solar panels,hiking boots,home gym,bad..one",
        "-b",
        "nikeshoes",
        "--sync",
        env=OFFLINE_WIDE,
    )
    listed = cli.ok("runs", "candidates", "1", "--all", "--json").json()
    by_name = {item["domain"] or item["input"]: item for item in listed}
    assert set(by_name) == {
        "homegym.com",
        "nikeshoes.com",
        "solarpanels.com",
        "hikingboots.com",
        "bad..one",
    }
    assert (by_name["solarpanels.com"]["stage"], by_name["hikingboots.com"]["stage"]) == (
        "dns",
        "rdap",
    )
    assert by_name["solarpanels.com"]["dropped_reason"].startswith("registered")
    assert by_name["bad..one"]["dropped_reason"].startswith("invalid input: ")
    assert by_name["nikeshoes.com"]["stage"] == "trademark"
    assert by_name["nikeshoes.com"]["tier_reason"].startswith("trademark: blocked by mark nike")
    table = cli.ok("runs", "candidates", "1", "--all", env=OFFLINE_WIDE).stdout
    assert "Run 1: not scored" in table
    assert "solarpanels.com" in table and "registered (listed in registered.txt)" in table


def test_runs_candidates_csv_writes_every_column(cli: Cli, tmp_path: Path) -> None:
    cli.ok("run", "--sample", "--sync", env=OFFLINE_WIDE)
    listed = cli.ok("runs", "candidates", "1", "--all", "--json").json()
    target = tmp_path / "run-1.csv"
    wrote = cli.ok("runs", "candidates", "1", "--all", "--csv", str(target), "--all-columns")
    assert wrote.stdout.strip() == f"wrote {len(listed)} candidates to {target}"
    data = target.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert data.endswith(b"\r\n") and b"\r\n" in data
    rows = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    assert len(rows) == len(listed)
    for row, document in zip(rows, listed, strict=True):
        flat = flatten(document)
        for column, value in row.items():
            if column in flat:
                assert value == cell(flat[column]), (column, value)
            else:  # a field this row does not have, or an object null in this row
                assert value == "", (column, value)
    # A loss is a plain negative number a spreadsheet sums, not the text `'-…`.
    losses = [row["expected_profit"] for row in rows if row["expected_profit"].startswith("-")]
    assert losses and all(float(loss) < 0 for loss in losses)
    # Only the first K, all of them recommended: --top and --recommended combine with --csv.
    best = tmp_path / "best.csv"
    cli.ok("runs", "candidates", "1", "--recommended", "--top", "2", "--csv", str(best))
    best_rows = list(csv.DictReader(io.StringIO(best.read_text("utf-8-sig"), newline="")))
    assert [row["domain"] for row in best_rows] == [item["domain"] for item in listed[:2]]
    # Without --all-columns: the readable columns, money in cents.
    assert list(best_rows[0]) == list(READABLE_COLUMNS)
    assert best_rows[0]["expected_value"] == f"{listed[0]['expected_value']:.2f}"
    assert_bad_input(
        cli.run("runs", "candidates", "1", "--all-columns"), "--all-columns goes with --csv"
    )


def test_runs_candidates_csv_refuses_what_it_should(cli: Cli, tmp_path: Path) -> None:
    cli.ok("run", "-k", "home gym", "--sync", env=OFFLINE_WIDE)
    target = tmp_path / "out.csv"
    target.write_text("keep me", encoding="utf-8")
    results = cli.run_many(
        ("runs", "candidates", "1", "--csv", str(target)),
        ("runs", "candidates", "1", "--csv", str(tmp_path / "no-such-dir" / "out.csv")),
        ("runs", "candidates", "1", "--csv", str(tmp_path)),
        ("runs", "candidates", "1", "--csv", str(target), "--json"),
        ("runs", "candidates", "1", "--force"),
        ("runs", "candidates", "99", "--csv", str(tmp_path / "unknown-run.csv")),
    )
    assert_bad_input(results[0], f"{target} exists: pass --force to overwrite it")
    assert_bad_input(results[1], "no-such-dir", "does not exist")
    assert_bad_input(results[2], f"cannot write {tmp_path}: it is a directory")
    assert_bad_input(results[3], "--csv and --json exclude each other")
    assert_bad_input(results[4], "--force goes with --csv")
    assert_bad_input(results[5], "no pipeline run with id 99")
    assert target.read_text(encoding="utf-8") == "keep me"
    assert not (tmp_path / "unknown-run.csv").exists()
    cli.ok("runs", "candidates", "1", "--csv", str(target), "--force")
    assert target.read_bytes().startswith(b"\xef\xbb\xbfdomain,tier,")
    if os.geteuid() != 0:  # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        denied = cli.run("runs", "candidates", "1", "--csv", str(locked / "out.csv"))
        assert_bad_input(denied, "permission denied")
