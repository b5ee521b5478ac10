"""`dominus alerts list|ack` as real subprocesses on a SQLite file: the open alerts, --all,
acknowledging, and an unknown id (one line, exit 2)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine

from dominus.jobs import utc_now
from dominus.notify import LogNotifier
from dominus.renewals.check import RenewalCheck
from dominus.renewals.model import Thresholds
from tests.support.cli import Cli, assert_bad_input
from tests.support.portfolio_rows import add_entry


@pytest.fixture
def cli(tmp_path: Path, database_url: str) -> Iterator[Cli]:
    runner = Cli(tmp_path, database_url)
    yield runner
    runner.kill_leftovers()


def test_list_and_acknowledge(cli: Cli, engine: Engine) -> None:
    today = utc_now().date()
    add_entry(engine, "soon.com", today + timedelta(days=2), utc_now())
    add_entry(engine, "later.com", today + timedelta(days=25), utc_now())
    RenewalCheck(engine, LogNotifier(), Thresholds(7, 30), utc_now).run(threading.Event())

    alerts = cli.ok("alerts", "list", "--json").json()
    assert [(alert["domain"], alert["type"], alert["state"]) for alert in alerts] == [
        ("soon.com", "critical", "open"),
        ("later.com", "imminent", "open"),
    ]
    table = cli.ok("alerts", "list").stdout
    assert "soon.com" in table and "critical" in table and "later.com" in table

    soon = alerts[0]["id"]
    acked = cli.ok("alerts", "ack", str(soon))
    assert acked.stdout.startswith(f"alert {soon} (soon.com, critical) acknowledged at ")
    assert [alert["domain"] for alert in cli.ok("alerts", "list", "--json").json()] == ["later.com"]
    everything = cli.ok("alerts", "list", "--all", "--json").json()
    assert [alert["state"] for alert in everything] == ["acknowledged", "open"]

    assert_bad_input(cli.run("alerts", "ack", "9999"), "no renewal alert with id 9999")


def test_acknowledge_every_open_alert(cli: Cli, engine: Engine) -> None:
    today = utc_now().date()
    for name, days in (("a.com", 2), ("b.com", 10), ("c.com", 25)):
        add_entry(engine, name, today + timedelta(days=days), utc_now())
    RenewalCheck(engine, LogNotifier(), Thresholds(7, 30), utc_now).run(threading.Event())
    first = cli.ok("alerts", "list", "--json").json()[0]["id"]
    cli.ok("alerts", "ack", str(first))

    acked = cli.ok("alerts", "ack", "--all")
    lines = acked.stdout.splitlines()
    assert lines[0] == "2 open alerts acknowledged"
    assert [line.split()[1] for line in lines[1:]] == ["b.com", "c.com"]
    assert cli.ok("alerts", "list", "--json").json() == []
    assert cli.ok("alerts", "ack", "--all", "--json").json() == []  # nothing left open

    assert_bad_input(cli.run("alerts", "ack"), "give an alert id, or --all")
    assert_bad_input(cli.run("alerts", "ack", str(first), "--all"), "not both")
