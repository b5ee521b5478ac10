"""Throwaway PostgreSQL databases for the tests: made from a migrated template ahead of need
and dropped after use (the fixtures in tests/conftest.py use these)."""

from __future__ import annotations

import contextlib
import os
import threading
import uuid
from queue import Empty, Queue

import psycopg
from sqlalchemy import make_url

POSTGRES_URL = os.environ.get(
    "DOMINUS_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


class PostgresDatabases:
    """Creates throwaway databases on the test server (and drops them)."""

    def __init__(self, server_url: str) -> None:
        self._admin = make_url(server_url).set(drivername="postgresql").render_as_string(False)
        self._server = make_url(server_url)

    def url(self, name: str) -> str:
        return self._server.set(database=name).render_as_string(hide_password=False)

    def create(self, name: str, template: str | None = None) -> str:
        with psycopg.connect(self._admin, autocommit=True) as admin:
            clause = f' TEMPLATE "{template}"' if template else ""
            admin.execute(f'CREATE DATABASE "{name}"{clause}')
        return self.url(name)

    def drop(self, name: str) -> None:
        with psycopg.connect(self._admin, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class ReadyDatabases:
    """Test databases cloned from the migrated template ahead of need, and dropped after use,
    by one background thread: a PostgreSQL test waits for neither (each takes about 0.3–1 s on
    this machine, and about a thousand tests use one). One thread does every CREATE and DROP,
    in turn, so the template is never copied twice at once."""

    AHEAD = 2

    def __init__(self, databases: PostgresDatabases, template: str) -> None:
        self._databases = databases
        self._template = template
        self._ready: Queue[str | BaseException] = Queue()
        self._to_drop: Queue[str | None] = Queue()
        self._wanted = threading.Semaphore(self.AHEAD)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="test-databases", daemon=True)
        self._thread.start()

    def take(self) -> str:
        """The name of a fresh database (waits while one is being made)."""
        made = self._ready.get(timeout=120)
        self._wanted.release()
        if isinstance(made, BaseException):
            raise made
        return made

    def give_back(self, name: str) -> None:
        self._to_drop.put(name)

    def close(self) -> None:
        self._stopping.set()
        self._wanted.release()  # wake the thread if it waits for demand
        self._to_drop.put(None)
        self._thread.join(120)
        while not self._ready.empty():
            made = self._ready.get_nowait()
            if isinstance(made, str):
                self._databases.drop(made)

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._drop_given_back()
            if self._wanted.acquire(timeout=0.05):
                if self._stopping.is_set():
                    break
                name = f"dominus_test_{uuid.uuid4().hex[:12]}"
                try:
                    self._databases.create(name, template=self._template)
                except Exception as error:  # handed to the test that waits for it
                    self._ready.put(error)
                else:
                    self._ready.put(name)
        self._drop_given_back(until_none=True)

    def _drop_given_back(self, *, until_none: bool = False) -> None:
        while True:
            try:
                name = self._to_drop.get(timeout=1 if until_none else 0)
            except Empty:
                return
            if name is None:
                if until_none:
                    return
                continue
            with contextlib.suppress(psycopg.Error):
                self._databases.drop(name)
