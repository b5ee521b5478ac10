"""`dominus keys list|resume` (ADR 0053), on SQLite and PostgreSQL: the keys with their limits
and pauses (in local time and UTC, or JSON), resume ends a pause for every process, and an
unknown or malformed key is one line and exit 2."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from dominus.jobs import Limiters
from tests.support.cli import Cli, assert_bad_input

pytestmark = pytest.mark.backends("sqlite", "postgresql")


@pytest.fixture
def cli(tmp_path: Path, database_url: str) -> Iterator[Cli]:
    runner = Cli(tmp_path, database_url)
    yield runner
    runner.kill_leftovers()


@pytest.fixture
def limiters(engine: Engine) -> Limiters:
    return Limiters.over(engine)


def test_keys_list_shows_limits_and_pauses(cli: Cli, limiters: Limiters) -> None:
    limiters.configure("rdap:rdap.example.test", "10/s")
    limiters.pause("whois:whois.example.test", 3600, "429 Too Many Requests")
    listed = cli.run("keys", "list", "--json")
    assert listed.code == 0, str(listed)
    rdap, whois = listed.json()
    assert (rdap["key"], rdap["limit"], rdap["paused"], rdap["paused_until"]) == (
        "rdap:rdap.example.test",
        "10/s",
        False,
        None,
    )
    assert (whois["limit"], whois["paused"], whois["pause_reason"]) == (
        None,
        True,
        "429 Too Many Requests",
    )
    assert whois["paused_until"].endswith("+00:00")
    table = cli.run("keys", "list", env={"COLUMNS": "200"})
    assert table.code == 0, str(table)
    assert "rdap:rdap.example.test" in table.stdout and "10/s" in table.stdout
    assert "429 Too Many Requests" in table.stdout
    assert whois["paused_until"][:10] in table.stdout


def test_keys_resume_ends_the_pause(cli: Cli, limiters: Limiters) -> None:
    limiters.pause("rdap:rdap.example.test", 3600, "down")
    resumed = cli.run("keys", "resume", "rdap:rdap.example.test", "--json")
    assert resumed.code == 0, str(resumed)
    assert resumed.json()["paused"] is False
    assert limiters.try_acquire("rdap:rdap.example.test") is None


@pytest.mark.parametrize(
    ("key", "fragment"),
    [("never:seen", "no rate-limit key 'never:seen'"), ("a b", "a rate-limit key is 1 to 200")],
)
def test_keys_resume_refuses_an_unknown_or_bad_key(
    cli: Cli, limiters: Limiters, key: str, fragment: str
) -> None:
    assert_bad_input(cli.run("keys", "resume", key), fragment)
    assert limiters.list() == []


def test_a_bad_rate_limits_setting_is_refused_in_one_line(cli: Cli) -> None:
    result = cli.run("keys", "list", env={"RATE_LIMITS": "rdap:x=0/s"})
    assert_bad_input(result, "RATE_LIMITS", "count must be 1 to")


def test_the_worker_configures_rate_limits_at_start(cli: Cli, limiters: Limiters) -> None:
    result = cli.run(
        "worker",
        "--diagnostic-jobs",
        "--burst",
        env={"RATE_LIMITS": "rdap:a.example.test=10/s,whois:b.example.test=1/2s"},
    )
    assert result.code == 0, str(result)
    assert {state.key: str(state.limit) for state in limiters.list()} == {
        "rdap:a.example.test": "10/s",
        "whois:b.example.test": "1/2s",
    }
