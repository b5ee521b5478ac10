"""The driver seam: what the store needs from a database that is not the same SQL on every one
(ADR 0028, in the manner of River's `riverdriver` and Oban's engines).

The store's transitions are written once, in the shared modules of this package, on SQLAlchemy
Core. Where the two databases need different statements (the claim, the batch insert, the batch
completion, the metrics upsert, INSERT … ON CONFLICT, NOTIFY, the fencing lock, the worker
loop's own connection, housekeeping) the shared code asks its `Backend`: `SqliteBackend`
(`sqlite_backend.py`) or `PostgresBackend` (`postgres_backend.py`), each statement spelled once
in its backend's module. `backend_for` picks one per engine; it is the one place that asks which
database an engine speaks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import Connection, Engine, Select, Table
from sqlalchemy.sql.dml import Insert

from dominus.jobs.clock import Clock
from dominus.jobs.liveness import LivenessLock, LockOwner
from dominus.jobs.model import ClaimRequest, Completed, Job, NewJob
from dominus.jobs.sql.metrics import Increments
from dominus.jobs.sql.sqlite_backend import SqliteBackend
from dominus.jobs.wakeup import ChangeWatcher


class Backend(Protocol):
    """One database's spelling of the statements that differ. Methods taking a `connection`
    run inside the caller's transaction and leave commit to it."""

    @property
    def name(self) -> str:
        """'sqlite' or 'postgresql'."""
        ...

    @property
    def default_max_prefetch(self) -> int:
        """How many jobs a worker claims beyond its free slots at most when the setting leaves
        it to the database (ADR 0033)."""
        ...

    def claim(
        self,
        connection: Connection,
        worker_id: str,
        job_types: Sequence[str],
        limit: int,
        now: datetime,
        queues: Sequence[str] | None = None,
    ) -> list[Job]:
        """pending & due → running for up to `limit` jobs of `job_types` (limit > 0, some
        types) from `queues` (None: every queue; never a paused one), in claim order: highest
        priority first, then oldest run_at, then id. A job with a concurrency key is claimed only
        within its key's free slots, counted so that concurrent claims never exceed them."""
        ...

    def claim_many(
        self, connection: Connection, requests: Sequence[ClaimRequest], now: datetime
    ) -> list[Job]:
        """`claim` for each request (the requests' limits and queues), in one transaction."""
        ...

    def insert_plain(
        self, connection: Connection, jobs: Sequence[NewJob], now: datetime
    ) -> list[int]:
        """Insert jobs without dedupe keys; their ids, in order."""
        ...

    def insert_or_ignore(
        self,
        table: Table,
        values: dict[str, Any],
        *,
        index_elements: Sequence[str] | None = None,
        index_where: Any = None,
    ) -> Insert:
        """INSERT … ON CONFLICT DO NOTHING (on the primary key, or the unique index named by
        `index_elements` and `index_where`)."""
        ...

    def complete(
        self, connection: Connection, outcomes: Sequence[Completed], now: datetime
    ) -> list[bool]:
        """Mark completed attempts (fenced on their claims) and count the ones that landed in
        the metrics. Whether each landed (False: its claim was lost)."""
        ...

    def add_metrics(self, connection: Connection, increments: Increments, shard: int) -> None:
        """Add `increments` to the metric counters of `shard`."""
        ...

    def count_enqueued(self, connection: Connection, job_types: Sequence[str]) -> None:
        """Count jobs this transaction inserted (one type per job) in the `enqueued` counters,
        or leave them to be counted from their rows (SQLite, ADR 0036)."""
        ...

    def uncounted_enqueues(self, connection: Connection) -> Mapping[str, int]:
        """Jobs enqueued but not in the `enqueued` counters yet, by type: a reading adds them."""
        ...

    def fold_enqueues(self, connection: Connection) -> None:
        """Move uncounted enqueues into the counters, in the caller's write transaction; done
        before and after deleting job rows (ADR 0036)."""
        ...

    def mark_enqueues_counted(self, connection: Connection) -> None:
        """Record that the counters already include every job row (after a copy)."""
        ...

    def lock_row(self, query: Select[Any]) -> Select[Any]:
        """`query` holding the job row it reads until the transaction ends, against every other
        writer of that row (the fence's last check, ADR 0024)."""
        ...

    def notify_new_jobs(self, connection: Connection, due_at: datetime | None = None) -> None:
        """Wake idle workers when this transaction commits (never if it rolls back). `due_at`:
        the earliest `run_at` of the jobs it made pending, when known (ADR 0062)."""
        ...

    def notify_cancel(self, connection: Connection, worker_id: str) -> None:
        """Tell the worker running a job that its cancel was requested (on commit)."""
        ...

    def settle_completed(
        self, outcomes: Sequence[Completed], now: datetime, claim_for: Sequence[ClaimRequest]
    ) -> tuple[list[bool], list[Job]] | None:
        """The worker loop's hottest transaction on a connection the loop's thread keeps:
        complete the outcomes (all completions) and claim. Which completions landed and the
        jobs claimed; None when nothing was written and the general path must run instead."""
        ...

    def enqueue_plain(self, jobs: Sequence[NewJob], now: datetime) -> list[int]:
        """The common enqueue (no dedupe key, no depth limit, no caller's transaction) in one
        transaction of its own, on a driver connection the backend keeps for it
        (`DriverConnections`, ADR 0035): insert, count, notify, commit. Their ids, in order."""
        ...

    def maintain(self) -> str | None:
        """Housekeeping the database needs; what was done, or None."""
        ...

    def clock(self) -> Clock:
        """The clock every timestamp written to this database comes from (ADR 0005)."""
        ...

    def change_watcher(self) -> ChangeWatcher:
        """What wakes an idle worker when another process commits (see `dominus.jobs.wakeup`)."""
        ...

    def verify(self) -> None:
        """Raise DatabaseGoneError when the database is no longer the one this backend opened."""
        ...

    def liveness_lock(self, worker_id: str) -> LivenessLock | None:
        """The lock `worker_id`'s death will release (`dominus.jobs.liveness`), not yet taken;
        None when this database offers none."""
        ...

    def free_lock_owners(self, connection: Connection, owners: Sequence[LockOwner]) -> set[str]:
        """The owners whose liveness lock nobody holds now."""
        ...

    def forget_dead_workers(self, worker_ids: Sequence[str]) -> None:
        """Remove what dead workers' locks left behind, if anything."""
        ...


def backend_for(engine: Engine, *, server_clock: bool | None = None) -> Backend:
    """The backend for `engine`'s database: the one place in `dominus.jobs` that asks which
    database an engine speaks. `server_clock`: see `stamps_with_server_clock`."""
    name = engine.dialect.name
    if name == "sqlite":
        stamps_with_server_clock(engine, server_clock)  # refuses True
        return SqliteBackend(engine)
    if name == "postgresql":
        # Imported here: it imports psycopg, which costs a SQLite process a fifth of a second.
        from dominus.jobs.sql.postgres_backend import PostgresBackend  # noqa: PLC0415

        return PostgresBackend(engine, server_clock=stamps_with_server_clock(engine, server_clock))
    raise ValueError(f"no job store backend for {name} databases")


def stamps_with_server_clock(engine: Engine, wanted: bool | None) -> bool:
    """Whether rate-limit grants on `engine` are stamped with the database server's clock, read
    in the granting statement itself (ADR 0053, "Whose clock"), rather than with the caller's
    `now`. None: the database's default, True on PostgreSQL (each process's extrapolated clock
    is a few milliseconds off, differently, which lets a window of server time hold more grants
    than the limit) and False on SQLite (one host clock, and its write lock serialises
    grants). False on PostgreSQL is for callers that simulate time with a clock of their own."""
    on_postgres = engine.dialect.name == "postgresql"
    if wanted is None:
        return on_postgres
    if wanted and not on_postgres:
        raise ValueError(f"{engine.dialect.name} has no server clock to stamp grants with")
    return wanted
