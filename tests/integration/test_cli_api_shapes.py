"""The CLI's `--json` and the API give the same shape (the same keys) for a portfolio entry, a
watched domain, a renewal alert, an outcome and a run: both dump one model per shape. The CLI
runs as real subprocesses on a SQLite file; the API is served in process on the same file."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from dominus.config import load_settings
from dominus.jobs.clock import utc_now
from dominus.notify.log import LogNotifier
from dominus.renewals.service import renewal_check
from dominus.server import create_app
from tests.support.api import API, api_settings, local_client
from tests.support.cli import Cli


@pytest.fixture
def cli(tmp_path: Path, database_url: str) -> Iterator[Cli]:
    runner = Cli(tmp_path, database_url)
    yield runner
    runner.kill_leftovers()


@pytest.fixture
def api(database_url: str) -> Iterator[TestClient]:
    app = create_app(api_settings(database_url, DOMINUS_PROVIDERS="sample"))
    with local_client(app) as client:
        yield client
    app.state.services.runtime.engine.dispose()


def keys(document: Any) -> set[str]:
    assert isinstance(document, dict), document
    return set(document)


def answer(response: Any) -> Any:
    assert response.status_code < 300, response.text
    return response.json()


def test_a_portfolio_entry_has_one_shape(cli: Cli, api: TestClient) -> None:
    renewal = (datetime.now(UTC) + timedelta(days=200)).date().isoformat()
    added = cli.ok("portfolio", "add", "example.com", "--renewal-date", renewal, "--json").json()
    posted = answer(
        api.post(f"{API}/portfolio", json={"domain": "example.net", "renewal_date": renewal})
    )
    assert keys(added) == keys(posted)

    (listed,) = [
        e for e in cli.ok("portfolio", "list", "--json").json() if e["domain"] == "example.com"
    ]
    (served,) = [e for e in answer(api.get(f"{API}/portfolio")) if e["domain"] == "example.com"]
    assert keys(listed) == keys(served) == keys(added)

    shown = cli.ok("portfolio", "show", "example.com", "--json").json()
    assert keys(shown) == keys(answer(api.get(f"{API}/portfolio/example.com")))
    assert isinstance(shown["history"], list)


def test_a_watched_domain_has_one_shape(cli: Cli, api: TestClient) -> None:
    added = cli.ok("watchlist", "add", "cloudnest.com", "--json").json()
    posted = answer(api.post(f"{API}/watchlist", json={"domain": "cloudnest.net"}))
    assert keys(added) == keys(posted)
    (listed,) = [
        e for e in cli.ok("watchlist", "list", "--json").json() if e["domain"] == "cloudnest.com"
    ]
    assert keys(listed) == keys(answer(api.get(f"{API}/watchlist/cloudnest.com"))) == keys(added)


def test_a_renewal_alert_has_one_shape(
    cli: Cli, api: TestClient, database_url: str, engine: Engine
) -> None:
    soon = (datetime.now(UTC) + timedelta(days=3)).date().isoformat()
    cli.ok("portfolio", "add", "expiring.com", "--renewal-date", soon)
    settings = load_settings(_env_file=None, DATABASE_URL=database_url)
    renewal_check(settings, engine, LogNotifier(), utc_now).run(threading.Event())

    (listed,) = cli.ok("alerts", "list", "--json").json()
    (served,) = answer(api.get(f"{API}/alerts"))
    assert keys(listed) == keys(served)
    acknowledged = cli.ok("alerts", "ack", str(listed["id"]), "--json").json()
    assert keys(acknowledged) == keys(answer(api.post(f"{API}/alerts/{listed['id']}/ack")))


def test_an_outcome_has_one_shape(cli: Cli, api: TestClient) -> None:
    added = cli.ok(
        "outcomes", "add", "gone.com", "--date", "2025-01-02", "--type", "dropped", "--json"
    ).json()
    posted = answer(
        api.post(
            f"{API}/outcomes", json={"domain": "gone.net", "type": "dropped", "date": "2025-01-02"}
        )
    )
    assert keys(added) == keys(posted)
    listed = cli.ok("outcomes", "list", "--json").json()
    served = answer(api.get(f"{API}/outcomes"))
    assert [keys(outcome) for outcome in listed] == [keys(outcome) for outcome in served]


def test_a_run_has_one_shape(cli: Cli, api: TestClient) -> None:
    created = answer(api.post(f"{API}/runs", json={"keywords": ["home gym"]}))
    run_id = created["run_id"]
    shown = cli.ok("runs", "show", str(run_id), "--json").json()
    assert keys(shown) == keys(answer(api.get(f"{API}/runs/{run_id}")))
    (listed,) = cli.ok("runs", "list", "--json").json()
    (served,) = answer(api.get(f"{API}/runs"))["items"]
    assert keys(listed) == keys(served)
