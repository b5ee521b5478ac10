"""`dominus watchlist ...` as real subprocesses on a SQLite file (the store itself is tested on
both backends in tests/integration/alerts): add, list, remove, poll (against loopback DNS
and RDAP servers) with --dry-run and --json, and bad input: one `error:` line, exit 2, nothing
written."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine

from dominus.watchlist.store import WatchlistStore
from tests.support.cli import Cli, assert_bad_input
from tests.support.portfolio_rows import add_entry
from tests.support.watch_fixtures import Registry, provider_settings


@pytest.fixture
def cli(tmp_path: Path, database_url: str) -> Iterator[Cli]:
    runner = Cli(tmp_path, database_url)
    yield runner
    runner.kill_leftovers()


@pytest.fixture
def registry() -> Iterator[Registry]:
    fake = Registry()
    yield fake
    fake.close()


def test_add_list_poll_and_remove(
    cli: Cli, registry: Registry, database_url: str, tmp_path: Path, engine: Engine
) -> None:
    added = cli.ok("watchlist", "add", "Free.TEST", "--notes", "for a client", "--json").json()
    assert (added["domain"], added["notes"], added["last_status"]) == (
        "free.test",
        "for a client",
        None,
    )
    assert cli.ok("watchlist", "add", "taken.test").stdout.strip() == "watching taken.test"
    registry.available("free.test")
    registry.registered("taken.test")
    env = provider_settings(database_url, registry, str(tmp_path))

    dry = cli.ok("watchlist", "poll", "--dry-run", "--json", env=env).json()
    assert dry == {
        "checked": 2,
        "available": 1,
        "notified": 1,
        "drop_changes": 0,
        "errors": [],
        "dry_run": True,
    }
    assert all(entry.last_checked_at is None for entry in WatchlistStore(engine).entries())

    polled = cli.ok("watchlist", "poll", env=env)
    assert "checked 2, available 1, notified 1, errors 0" in polled.stdout
    assert "notification watchlist.digest: 1 watchlist change: free.test" in polled.stderr
    assert "  watchlist.available: free.test is available to register" in polled.stderr
    listing = {entry["domain"]: entry for entry in cli.ok("watchlist", "list", "--json").json()}
    assert (listing["free.test"]["last_status"], listing["free.test"]["notified"]) == (
        "available",
        True,
    )
    assert listing["taken.test"]["last_status"] == "registered"
    table = cli.ok("watchlist", "list").stdout
    assert "free.test" in table and "available" in table and "for a client" in table

    again = cli.ok("watchlist", "poll", "--json", env=env).json()
    assert again["checked"] == 0  # both were checked within WATCHLIST_POLL_INTERVAL_HOURS

    assert cli.ok("watchlist", "remove", "FREE.test").stdout.strip() == (
        "no longer watching free.test"
    )
    assert [entry.domain for entry in WatchlistStore(engine).entries()] == ["taken.test"]


def test_bad_input_is_one_line_and_exit_2(cli: Cli, engine: Engine) -> None:
    cli.ok("watchlist", "add", "kept.com")
    results = [
        cli.run(*args, timeout=60)
        for args in (
            ("watchlist", "add", "no-tld"),
            ("watchlist", "add", "kept.com"),
            ("watchlist", "add", "x.com", "--notes", "n" * 2001),
            ("watchlist", "remove", "other.com"),
        )
    ]
    expected = [
        "invalid domain 'no-tld'",
        "kept.com is already on the watchlist",
        "notes longer than 2000",
        "other.com is not on the watchlist",
    ]
    for result, fragment in zip(results, expected, strict=True):
        assert_bad_input(result, fragment)
    assert [entry.domain for entry in WatchlistStore(engine).entries()] == ["kept.com"]


def test_invalid_settings_stop_the_command_naming_the_variable(cli: Cli) -> None:
    settings = {
        "WATCHLIST_POLL_INTERVAL_HOURS": "-1",
        "WATCHLIST_RDAP_DELAY_MS": "60001",
        "NOTIFY_WEBHOOK_URL": "ftp://example.net/hook",
    }
    for name, value in settings.items():
        result = cli.run("watchlist", "list", env={name: value})
        assert result.code == 2, result.stderr
        assert result.stdout == ""
        [line] = result.stderr.splitlines()
        assert line.startswith("error: ") and name in line, line


def test_a_held_name_is_flagged_on_add_and_in_the_list(
    cli: Cli, registry: Registry, database_url: str, tmp_path: Path, engine: Engine
) -> None:
    add_entry(engine, "held.test", date(2031, 1, 1), datetime.now(UTC))
    added = cli.ok("watchlist", "add", "held.test")
    assert added.stdout.splitlines() == [
        "watching held.test",
        "note: held.test is already in your portfolio",
    ]
    cli.ok("watchlist", "add", "free.test")
    registry.in_status("held.test", ["pendingDelete"], last_changed="2030-01-01")
    registry.available("free.test")
    cli.ok("watchlist", "poll", env=provider_settings(database_url, registry, str(tmp_path)))
    listing = {entry["domain"]: entry for entry in cli.ok("watchlist", "list", "--json").json()}
    assert (listing["held.test"]["in_portfolio"], listing["free.test"]["in_portfolio"]) == (
        True,
        False,
    )
    assert listing["held.test"]["drop_phase"] == "pending_delete"
    assert listing["held.test"]["rdap_statuses"] == ["pending delete"]
    rows = {
        line.split("│")[1].strip(): line
        for line in cli.ok("watchlist", "list").stdout.splitlines()
        if line.count("│") > 2
    }
    assert "in portfolio" in rows["held.test"] and "pendingDelete" in rows["held.test"]
    assert "in portfolio" not in rows["free.test"]
