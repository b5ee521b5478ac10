"""A database failure answers 503 in DOMINUS's words; the driver's text, which names hosts,
users, databases and files, goes to the server log only (ADR 0011)."""

from __future__ import annotations

import logging
import shutil
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.pool import ConnectionPoolEntry

from dominus.server import create_app
from tests.support.api import API, api_settings, assert_error, local_client, runtime_of

UNAVAILABLE = "the database is unavailable"


@pytest.fixture
def client_on() -> Iterator[Callable[[str], TestClient]]:
    """An app (and its TestClient) on the database at a URL. These tests choose their database
    themselves, so they do not run once per backend."""
    clients: list[TestClient] = []

    def make(url: str) -> TestClient:
        client = local_client(create_app(api_settings(url)))
        clients.append(client.__enter__())
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)
        runtime_of(client).engine.dispose()


def warnings_of(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


@pytest.mark.postgres
@pytest.mark.parametrize("missing", ["role", "database"])
def test_a_refused_connection_does_not_tell_the_client_who_or_where(
    client_on: Callable[[str], TestClient], caplog: pytest.LogCaptureFixture, missing: str
) -> None:
    # The test server trusts every local connection, so a name it does not know stands in for a
    # failed password: the driver's message names it, as it would name the user.
    name = f"dominus_no_such_{missing}_{uuid.uuid4().hex[:8]}"
    role, database = (name, "postgres") if missing == "role" else ("postgres", name)
    client = client_on(f"postgresql+psycopg://{role}@127.0.0.1:5432/{database}")
    caplog.set_level(logging.WARNING, logger="dominus.api")
    for method, path in (("GET", "/ready"), ("GET", "/jobs"), ("POST", "/jobs")):
        body = {"type": "diag.noop"} if method == "POST" else None
        response = client.request(method, f"{API}{path}", json=body)
        error = assert_error(response, 503, "database_unavailable")
        assert error["message"] == UNAVAILABLE, error
        for secret in (name, "127.0.0.1", "5432", "connection failed"):
            assert secret not in response.text, (secret, response.text)
    # The operator sees what the driver said.
    assert f'{missing} "{name}" does not exist' in warnings_of(caplog)


def test_a_full_database_is_503_in_our_words_on_one_line(
    client_on: Callable[[str], TestClient],
    caplog: pytest.LogCaptureFixture,
    migrated_sqlite_template: Path,
    tmp_path: Path,
) -> None:
    path = tmp_path / "full.db"
    shutil.copyfile(migrated_sqlite_template, path)
    # No free page left inside the file either (a migration that rebuilt a table leaves some),
    # so the insert below must grow it.
    with closing(sqlite3.connect(path)) as compacting:
        compacting.execute("VACUUM")
    client = client_on(f"sqlite:///{path}")
    engine = runtime_of(client).engine

    def no_room_to_grow(connection: DBAPIConnection, _: ConnectionPoolEntry) -> None:
        # SQLITE_FULL, for real: the file may not grow by a single page.
        assert isinstance(connection, sqlite3.Connection)
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        connection.execute(f"PRAGMA max_page_count = {pages}")

    event.listen(engine, "connect", no_room_to_grow)
    engine.dispose()  # every connection from now on is a new one
    caplog.set_level(logging.WARNING, logger="dominus.api")
    big = {"fail_times": 1, "message": "x" * 9_000}
    response = client.post(f"{API}/jobs", json={"type": "diag.fail", "payload": big})
    error = assert_error(response, 503, "database_unavailable")
    assert error["message"].startswith("the database is full"), error
    assert "\n" not in error["message"]
    assert "sqlalche.me" not in response.text
    assert "database or disk is full" in warnings_of(caplog)
