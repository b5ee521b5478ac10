"""Throwaway PostgreSQL databases for the tests: cloned from a migrated template ahead of need,
renamed and emptied back to the template's state after use, dropped at the end (the fixtures
in tests/conftest.py use these)."""

from __future__ import annotations

import contextlib
import os
import threading
import uuid
from dataclasses import dataclass
from queue import Empty, Queue
from typing import Any

import psycopg
from psycopg import sql
from psycopg.abc import Query
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

    def conninfo(self, name: str) -> str:
        """`name`'s URL for psycopg itself."""
        return make_url(self._admin).set(database=name).render_as_string(hide_password=False)

    def create(self, name: str, template: str | None = None) -> str:
        with psycopg.connect(self._admin, autocommit=True) as admin:
            clause = f' TEMPLATE "{template}"' if template else ""
            admin.execute(f'CREATE DATABASE "{name}"{clause}')
        return self.url(name)

    def rename(self, name: str, new_name: str) -> None:
        """Rename `name`, ending its sessions first (as DROP DATABASE ... WITH (FORCE) does)."""
        with psycopg.connect(self._admin, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,)
            )
            # Waits (up to 5 s) for the ended sessions to go.
            admin.execute(f'ALTER DATABASE "{name}" RENAME TO "{new_name}"')

    def drop(self, name: str) -> None:
        with psycopg.connect(self._admin, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# Everything a test could change in a database besides its rows: what the catalogs say about
# the objects of its own schemas, the database's own settings, and what outlives a session
# (prepared transactions, large objects). Equal fingerprints: emptying the tables restores
# the template's state.
_SCHEMA_FINGERPRINT = """
WITH own_namespaces AS (
    SELECT oid, nspname, nspacl FROM pg_namespace
     WHERE nspname !~ '^pg_' AND nspname <> 'information_schema'
), own_relations AS (
    SELECT c.* FROM pg_class c JOIN own_namespaces n ON n.oid = c.relnamespace
)
SELECT md5(coalesce(string_agg(item, E'\\n' ORDER BY item), '')) FROM (
    SELECT format('namespace %s %s', nspname, nspacl) FROM own_namespaces
    UNION ALL
    SELECT format('relation %s %s %s %s %s', oid::regclass, relkind, relpersistence,
                  reloptions, relacl) FROM own_relations
    UNION ALL
    SELECT format('column %s %s %s %s %s %s %s', a.attrelid::regclass, a.attnum, a.attname,
                  format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attisdropped,
                  pg_get_expr(d.adbin, d.adrelid))
      FROM pg_attribute a JOIN own_relations r ON r.oid = a.attrelid
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE a.attnum > 0
    UNION ALL
    SELECT format('constraint %s %s %s', conrelid::regclass, conname, pg_get_constraintdef(oid))
      FROM pg_constraint WHERE connamespace IN (SELECT oid FROM own_namespaces)
    UNION ALL
    SELECT format('index %s', pg_get_indexdef(indexrelid))
      FROM pg_index WHERE indrelid IN (SELECT oid FROM own_relations)
    UNION ALL
    SELECT format('trigger %s', pg_get_triggerdef(oid)) FROM pg_trigger WHERE NOT tgisinternal
    UNION ALL
    SELECT format('rule %s %s', ev_class::regclass, pg_get_ruledef(oid)) FROM pg_rewrite
     WHERE ev_class IN (SELECT oid FROM own_relations)
    UNION ALL
    SELECT format('policy %s %s', polrelid::regclass, polname) FROM pg_policy
    UNION ALL
    SELECT format('function %s %s', oid::regprocedure, md5(prosrc)) FROM pg_proc
     WHERE pronamespace IN (SELECT oid FROM own_namespaces)
    UNION ALL
    SELECT format('type %s %s', oid::regtype, typtype) FROM pg_type
     WHERE typnamespace IN (SELECT oid FROM own_namespaces)
    UNION ALL
    SELECT format('enum %s %s %s', enumtypid::regtype, enumsortorder, enumlabel) FROM pg_enum
    UNION ALL
    SELECT format('sequence %s %s %s %s %s %s', seqrelid::regclass, seqstart, seqincrement,
                  seqmin, seqmax, seqcycle) FROM pg_sequence
    UNION ALL
    SELECT format('extension %s %s', extname, extversion) FROM pg_extension
    UNION ALL
    SELECT format('database %s %s %s', datallowconn, datconnlimit, datacl)
      FROM pg_database WHERE datname = current_database()
    UNION ALL
    SELECT format('settings %s %s', setrole, setconfig) FROM pg_db_role_setting
     WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
    UNION ALL
    SELECT format('prepared %s', gid) FROM pg_prepared_xacts WHERE database = current_database()
    UNION ALL
    SELECT format('large object %s', oid) FROM pg_largeobject_metadata
) AS items (item)
"""
# The tables ever written to: an empty table of the template has no pages, and a row written
# (even deleted or rolled back since) gives it one.
_WRITTEN_TABLES = """
SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind = 'r' AND n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
   AND pg_relation_size(c.oid) > 0
"""
_SEQUENCES = "SELECT schemaname, sequencename, start_value, last_value FROM pg_sequences"
# Only client sessions: an autovacuum worker gives way to TRUNCATE's lock by itself.
_OTHER_SESSIONS = """
SELECT count(*) FROM pg_stat_activity
 WHERE datname = current_database() AND pid <> pg_backend_pid()
   AND backend_type = 'client backend'
"""

Name = tuple[str, str]  # (schema, name) of a table or sequence


@dataclass(frozen=True)
class TemplateState:
    """The state of a database cloned from the template: its schema's fingerprint, the rows of
    the tables the migrations wrote to, where each sequence stands."""

    schema: str
    rows: dict[Name, str]  # table -> its rows, as text
    sequences: dict[Name, tuple[int, int | None]]  # (start value, last value if called)

    @classmethod
    def read(cls, connection: psycopg.Connection[Any]) -> TemplateState:
        rows = {table: _rows(connection, table) for table in _names(connection, _WRITTEN_TABLES)}
        return cls(_one(connection, _SCHEMA_FINGERPRINT), rows, _sequences(connection))

    def restore(self, connection: psycopg.Connection[Any]) -> bool:
        """Bring `connection`'s database back to this state in its open transaction (the
        caller commits): the tables written to emptied, the sequences moved back, the
        statistics zeroed. False, having changed nothing, where that would not make it the
        template's equal: another session still connected, a schema the test changed, the
        migrations' rows changed."""
        if _one(connection, _OTHER_SESSIONS) != 0:
            return False
        if _one(connection, _SCHEMA_FINGERPRINT) != self.schema:
            return False
        if any(_rows(connection, table) != text for table, text in self.rows.items()):
            return False
        written = [
            sql.Identifier(*table)
            for table in _names(connection, _WRITTEN_TABLES)
            if table not in self.rows
        ]
        if written:
            # CASCADE: the empty tables that reference them (none that the migrations wrote to,
            # checked after).
            truncate = sql.SQL("TRUNCATE TABLE {} CASCADE").format(sql.SQL(", ").join(written))
            connection.execute(truncate)
            if any(_rows(connection, table) != text for table, text in self.rows.items()):
                connection.rollback()
                return False
        for sequence, now in _sequences(connection).items():
            start, last = self.sequences[sequence]
            if now[1] != last:  # setval(.., false): the next value is `start`, as never called
                setval = "SELECT setval(%s::regclass, %s, %s)"
                name = sql.Identifier(*sequence).as_string(connection)
                connection.execute(
                    setval, (name, start if last is None else last, last is not None)
                )
        # The statistics too: the queue's housekeeping reads `last_analyze` and dead rows.
        connection.execute("SELECT pg_stat_reset()")
        return True


def _one(connection: psycopg.Connection[Any], query: Query) -> Any:
    row = connection.execute(query).fetchone()
    assert row is not None
    return row[0]


def _names(connection: psycopg.Connection[Any], query: Query) -> list[Name]:
    return [(str(schema), str(name)) for schema, name in connection.execute(query).fetchall()]


def _rows(connection: psycopg.Connection[Any], table: Name) -> str:
    query = sql.SQL("SELECT coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '') FROM {} t")
    return str(_one(connection, query.format(sql.Identifier(*table))))


def _sequences(connection: psycopg.Connection[Any]) -> dict[Name, tuple[int, int | None]]:
    return {
        (str(schema), str(name)): (int(start), None if last is None else int(last))
        for schema, name, start, last in connection.execute(_SEQUENCES).fetchall()
    }


class ReadyDatabases:
    """Test databases ready ahead of need, made by one background thread: a PostgreSQL test
    waits for none (about a thousand tests use one). A database a test gives back is renamed
    (its sessions ended, so nothing the test left behind can reach it), emptied back to the
    template's state and used again: DROP DATABASE forces a checkpoint, which on a busy machine
    took seconds (the drops, not the clones, kept tests waiting), while this takes
    milliseconds. One that cannot be emptied to the template's equal is dropped and a new one
    cloned. One thread does every clone, reset and drop, in turn, so the template is never
    copied twice at once; every database it made is dropped at the end."""

    AHEAD = 2

    def __init__(self, databases: PostgresDatabases, template: str) -> None:
        self._databases = databases
        self._template = template
        with psycopg.connect(databases.conninfo(template)) as connection:
            self._state = TemplateState.read(connection)
        self._made: set[str] = set()
        self._ready: Queue[str | BaseException] = Queue()
        self._given_back: Queue[str] = Queue()
        self._wanted = threading.Semaphore(self.AHEAD)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="test-databases", daemon=True)
        self._thread.start()

    def take(self) -> str:
        """The name of a database in the template's state (waits while one is being made)."""
        made = self._ready.get(timeout=120)
        self._wanted.release()
        if isinstance(made, BaseException):
            raise made
        return made

    def give_back(self, name: str) -> None:
        self._given_back.put(name)

    def close(self) -> None:
        self._stopping.set()
        self._wanted.release()  # wake the thread if it waits for demand
        self._thread.join(120)
        for name in sorted(self._made):
            with contextlib.suppress(psycopg.Error):
                self._databases.drop(name)

    def _run(self) -> None:
        while not self._stopping.is_set():
            if self._wanted.acquire(timeout=0.05):
                if self._stopping.is_set():
                    break
                self._ready.put(self._next())

    def _next(self) -> str | BaseException:
        """A database given back and emptied, else a new clone (or why none could be made)."""
        while True:
            try:
                given_back = self._given_back.get_nowait()
            except Empty:
                break
            name = self._renamed(given_back)
            if name is not None and self._emptied(name):
                return name
            with contextlib.suppress(psycopg.Error):
                self._databases.drop(name or given_back)
                self._made.discard(name or given_back)
        name = _new_name()
        try:
            self._databases.create(name, template=self._template)
        except Exception as error:  # handed to the test that waits for it
            return error
        self._made.add(name)
        return name

    def _renamed(self, name: str) -> str | None:
        """`name` under a new name, its sessions ended: whatever a test left behind (an engine
        not disposed of, a thread still running) can reach it no more than a dropped one.
        None if that failed."""
        new_name = _new_name()
        try:
            self._databases.rename(name, new_name)
        except psycopg.Error:
            return None
        self._made.discard(name)
        self._made.add(new_name)
        return new_name

    def _emptied(self, name: str) -> bool:
        try:
            with psycopg.connect(self._databases.conninfo(name)) as connection:
                return self._state.restore(connection)  # committed as the block ends
        except psycopg.Error:
            return False


def _new_name() -> str:
    return f"dominus_test_{uuid.uuid4().hex[:12]}"
