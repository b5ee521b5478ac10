"""`dominus enqueue --concurrency-key K [--concurrency-limit N]`, `--rate-key K` and `dominus
jobs show`: a bad key or limit is one line and exit 2, with nothing written (ADR 0052, 0053)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from dominus.jobs import SqlJobStore
from tests.support.cli import Cli, assert_bad_input

pytestmark = pytest.mark.backends("sqlite", "postgresql")


@pytest.fixture
def cli(tmp_path: Path, database_url: str) -> Iterator[Cli]:
    runner = Cli(tmp_path, database_url)
    yield runner
    runner.kill_leftovers()


def test_enqueue_with_a_key_and_show_it(cli: Cli, store: SqlJobStore) -> None:
    result = cli.run(
        "enqueue",
        "diag.noop",
        "--diagnostic-jobs",
        "--concurrency-key",
        "portfolio-rescore:main",
        "--concurrency-limit",
        "2",
    )
    assert result.code == 0, str(result)
    job = store.get_job(int(result.stdout))
    assert (job.concurrency_key, job.concurrency_limit) == ("portfolio-rescore:main", 2)
    shown = cli.run("jobs", "show", result.stdout.strip(), "--json")
    document = json.loads(shown.stdout)
    assert (document["concurrency_key"], document["concurrency_limit"]) == (
        "portfolio-rescore:main",
        2,
    )
    defaulted = cli.run("enqueue", "diag.noop", "--diagnostic-jobs", "--concurrency-key", "k")
    assert store.get_job(int(defaulted.stdout)).concurrency_limit == 1


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        (["--concurrency-key", "k", "--concurrency-limit", "0"], "between 1 and 10000, got 0"),
        (["--concurrency-key", "k", "--concurrency-limit", "-1"], "between 1 and 10000, got -1"),
        (["--concurrency-key", "k", "--concurrency-limit", "1.5"], "must be a whole number"),
        (["--concurrency-key", "k", "--concurrency-limit", "two"], "must be a whole number"),
        (["--concurrency-limit", "2"], "concurrency_limit needs a concurrency_key"),
        (["--concurrency-key", "a b"], "printable ASCII characters without spaces"),
    ],
)
def test_enqueue_refuses_a_bad_key_or_limit(
    cli: Cli, store: SqlJobStore, options: list[str], fragment: str
) -> None:
    result = cli.run("enqueue", "diag.noop", "--diagnostic-jobs", *options)
    assert_bad_input(result, fragment)
    assert store.list_jobs() == []


def test_enqueue_with_a_rate_key_and_show_it(cli: Cli, store: SqlJobStore) -> None:
    result = cli.run("enqueue", "diag.noop", "--diagnostic-jobs", "--rate-key", "api:example.com")
    assert result.code == 0, str(result)
    assert store.get_job(int(result.stdout)).rate_key == "api:example.com"
    shown = cli.run("jobs", "show", result.stdout.strip(), "--json")
    assert json.loads(shown.stdout)["rate_key"] == "api:example.com"


@pytest.mark.parametrize("key", ["a b", "a/b", ""])
def test_enqueue_refuses_a_bad_rate_key(cli: Cli, store: SqlJobStore, key: str) -> None:
    result = cli.run("enqueue", "diag.noop", "--diagnostic-jobs", "--rate-key", key)
    assert_bad_input(result, "--rate-key: rate_key must be 1 to 200 characters")
    assert store.list_jobs() == []
