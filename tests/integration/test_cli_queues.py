"""`dominus enqueue --queue`, `dominus worker --queue NAME[=N]`, `dominus queues list|pause|resume`
and the queues in `dominus queue stats`: bad input is one line and exit 2, with nothing written."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dominus.jobs import HandlerRegistry, JobQueue, JobStatus, SqlJobStore
from tests.support.cli import Cli, assert_bad_input

pytestmark = pytest.mark.backends("sqlite", "postgresql")


@pytest.fixture
def cli(tmp_path: Path, database_url: str) -> Iterator[Cli]:
    runner = Cli(tmp_path, database_url)
    yield runner
    runner.kill_leftovers()


def test_enqueue_into_a_queue(cli: Cli, store: SqlJobStore) -> None:
    result = cli.run("enqueue", "diag.noop", "--diagnostic-jobs", "--queue", "mail")
    assert result.code == 0, str(result)
    assert store.get_job(int(result.stdout)).queue == "mail"
    plain = cli.run("enqueue", "diag.noop", "--diagnostic-jobs")
    assert store.get_job(int(plain.stdout)).queue == "default"


@pytest.mark.parametrize("bad", ["Mail", "", "a b", "x" * 65])
def test_enqueue_refuses_a_bad_queue_name(cli: Cli, store: SqlJobStore, bad: str) -> None:
    result = cli.run("enqueue", "diag.noop", "--diagnostic-jobs", "--queue", bad)
    assert_bad_input(result, "queue must be 1 to 64 characters")
    assert store.list_jobs() == []


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        (["--queue", "Mail"], "queue must be 1 to 64 characters"),
        (["--queue", "mail=0"], "whole number of at least 1"),
        (["--queue", "mail=x"], "whole number of at least 1"),
        (["--queue", "mail", "--queue", "mail=1"], "named twice"),
        (["--concurrency", "2", "--queue", "a=2", "--queue", "b=1"], "add up to 3"),
    ],
)
def test_the_worker_refuses_bad_queues(
    cli: Cli, store: SqlJobStore, options: list[str], fragment: str
) -> None:
    result = cli.run("worker", "--diagnostic-jobs", "--burst", *options)
    assert_bad_input(result, fragment)
    assert store.list_workers() == []  # refused before it registered


def test_a_worker_takes_only_its_queues(
    cli: Cli, store: SqlJobStore, registry: HandlerRegistry
) -> None:
    queue = JobQueue(store, registry)
    mail = queue.enqueue_job("diag.noop", queue="mail").job_id
    other = queue.enqueue_job("diag.noop").job_id
    result = cli.run("worker", "--diagnostic-jobs", "--burst", "--queue", "mail=1")
    assert result.code == 0, str(result)
    assert store.get_job(mail).status is JobStatus.COMPLETED
    assert store.get_job(other).status is JobStatus.PENDING


def test_pause_list_and_resume(cli: Cli, store: SqlJobStore, registry: HandlerRegistry) -> None:
    queue = JobQueue(store, registry)
    job = queue.enqueue_job("diag.noop", queue="mail").job_id
    paused = cli.run("queues", "pause", "mail")
    assert paused.code == 0, str(paused)
    assert "queue mail: paused (1 pending, 0 running)" in paused.stdout
    listed = cli.run("queues", "list", "--json").json()
    assert [(q["name"], q["paused"], q["pending"]) for q in listed] == [
        ("default", False, 0),
        ("mail", True, 1),
    ]
    assert cli.run("worker", "--diagnostic-jobs", "--burst").code == 0
    assert store.get_job(job).status is JobStatus.PENDING
    stats = cli.run("queue", "stats")
    assert "mail" in stats.stdout and "paused" in stats.stdout
    assert cli.run("queues", "resume", "mail", "--json").json()["paused"] is False
    assert cli.run("worker", "--diagnostic-jobs", "--burst").code == 0
    assert store.get_job(job).status is JobStatus.COMPLETED


def test_pause_refuses_a_bad_name(cli: Cli, store: SqlJobStore) -> None:
    assert_bad_input(cli.run("queues", "pause", "Bad!"), "queue must be 1 to 64 characters")
    assert store.list_queues()[0].name == "default"
    assert [q.name for q in store.list_queues()] == ["default"]
