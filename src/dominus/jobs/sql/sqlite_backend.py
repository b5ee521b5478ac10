"""The SQLite backend: its spelling of every statement that differs by database (ADR 0028).

The hot statements (insert a batch, claim, complete a batch, the metrics upsert) run on the raw
`sqlite3` connection of the transaction SQLAlchemy opened: profiles of the drain and of batch
enqueue showed SQLAlchemy's per-statement machinery (bind and result processors, insertmanyvalues
falling back to one INSERT per row when it must return ids in order) costing more than SQLite
itself (ADR 0003).

Values are stored exactly as SQLAlchemy would store them (see `dominus.db.types.UTCDateTime`:
naive UTC text `YYYY-MM-DD HH:MM:SS.ffffff`; JSON as text), so both paths read each other's rows.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, Engine, Select, Table, literal, select
from sqlalchemy.dialects import sqlite
from sqlalchemy.sql.dml import Insert

from dominus.db.engine import sqlite_path
from dominus.db.errors import database_errors, is_busy_error, translated
from dominus.db.sqlite_file import SqliteFileWatch
from dominus.db.types import UTCDateTime
from dominus.jobs.clock import Clock, utc_now
from dominus.jobs.liveness import (
    FileLivenessLock,
    LivenessLock,
    LockOwner,
    free_flock_owners,
    lock_directory,
    remove_lock_files,
)
from dominus.jobs.model import (
    Claim,
    ClaimedJobs,
    ClaimRequest,
    Completed,
    Job,
    JobsAlike,
    NewJob,
)
from dominus.jobs.sql import sqlite_enqueue_counts as enqueue_counts
from dominus.jobs.sql.driver_connections import DriverConnections
from dominus.jobs.sql.metrics import Increments, shard_for
from dominus.jobs.sql.rate_gate import SqliteGate, gate
from dominus.jobs.sql.rows import job_from_fields
from dominus.jobs.sql.sqlite_claims import HAS_KEYED_PENDING, claim_parameters, claim_sql
from dominus.jobs.sql.tables import NEW_JOB_COLUMN_LIST, NEW_JOB_COLUMNS, job_queue, new_job_values
from dominus.jobs.wakeup import ChangeWatcher, NoChangeWatcher, SqliteDataVersionWatcher

# How long a fold waits for the write lock before leaving it to the next round.
FOLD_PATIENCE_MS = 50

# Each job's own values in the order of NEW_JOB_COLUMNS (see `insert_plain_jobs`).
_INSERT = (
    f"INSERT INTO job_queue ({NEW_JOB_COLUMN_LIST}) VALUES ({new_job_values(lambda _column: '?')})"
)

_UPSERT_METRICS = (
    "INSERT INTO job_metrics (name, job_type, bucket, shard, value) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (name, job_type, bucket, shard) DO UPDATE SET value = value + excluded.value"
)


def driver_connection(connection: Connection) -> sqlite3.Connection:
    raw = connection.connection.driver_connection
    assert isinstance(raw, sqlite3.Connection)
    return raw


# The last second `stored_time` wrote in full: its first and next POSIX timestamps and its text
# up to the microseconds. One tuple, replaced whole and read once, so threads never see half
# of one (the list only holds it).
_last_second: list[tuple[float, float, str]] = [(0.0, 0.0, "")]
# Below this many seconds from the epoch (the year 2106) two floats a microsecond apart are
# always distinct and correctly ordered around a whole second: a time in another second cannot
# have a timestamp inside the cached one's.
_EXACT_SECONDS = 2.0**32


def stored_time(value: datetime) -> str:
    """A UTC timestamp as SQLAlchemy stores it in SQLite."""
    if value.tzinfo is UTC:
        # The engine's clocks' times (every enqueue writes one, a few each second at least):
        # the date and time of day are those of the last call's second, most of the time, and
        # formatting them cost more than the rest of building the job's row.
        first, following, prefix = _last_second[0]
        if first <= value.timestamp() < following:
            # %-formatting: a third of the instructions of the f-string's format spec.
            return prefix + "%06d" % value.microsecond  # noqa: UP031
        return _stored_utc_time(value)
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")


def _stored_utc_time(value: datetime) -> str:
    text = value.isoformat(" ", "microseconds")[:-6]  # less its "+00:00"
    # Whole, as the float's error is far under half a second.
    second = float(round(value.timestamp() - value.microsecond / 1_000_000))
    if abs(second) < _EXACT_SECONDS:
        _last_second[0] = (second, second + 1.0, text[:-6])
    return text


def _time(text: str | None) -> datetime | None:
    # The stored text is naive UTC (`stored_time`, SQLAlchemy's DateTime): parsed with its offset
    # appended, one call instead of a parse and a `replace`, a quarter of the time (it runs for
    # every claimed job). A text written by other means with an offset of its own is read as
    # before: its clock time, taken as UTC.
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text + "+00:00")
    except ValueError:
        return datetime.fromisoformat(text).replace(tzinfo=UTC)


def _document(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _encoded(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


class SqliteBackend:
    """SQLite through the `sqlite3` driver (see the module's docstring)."""

    name = "sqlite"
    # A claim holds the database's one write lock while it marks its rows: a few hundred ahead
    # keep a tick short for the writers waiting behind it (ADR 0033).
    default_max_prefetch = 256

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._loop = _LoopConnection(engine)
        self._connections = DriverConnections(engine, prepare=_autocommit)
        self._path = sqlite_path(engine)
        self._file = SqliteFileWatch(self._path) if self._path is not None else None
        # Worker liveness lock files (`dominus.jobs.liveness`), beside the database file.
        self._locks = lock_directory(self._path.resolve()) if self._path is not None else None

    # --- statements in the caller's transaction ------------------------------------------
    def claim(
        self,
        connection: Connection,
        worker_id: str,
        job_types: Sequence[str],
        limit: int,
        now: datetime,
        queues: Sequence[str] | None = None,
    ) -> list[Job]:
        return claim_jobs(driver_connection(connection), worker_id, job_types, limit, now, queues)

    def claim_many(
        self, connection: Connection, requests: Sequence[ClaimRequest], now: datetime
    ) -> list[Job]:
        raw = driver_connection(connection)
        return ClaimedJobs.joined(
            claim_jobs(
                raw, request.worker_id, request.job_types, request.limit, now, request.queues
            )
            for request in requests
        )

    def insert_plain(
        self, connection: Connection, jobs: Sequence[NewJob], now: datetime
    ) -> list[int]:
        return insert_plain_jobs(driver_connection(connection), jobs, now)

    def insert_or_ignore(
        self,
        table: Table,
        values: dict[str, Any],
        *,
        index_elements: Sequence[str] | None = None,
        index_where: Any = None,
    ) -> Insert:
        statement: Insert = (
            sqlite.insert(table)
            .values(values)
            .on_conflict_do_nothing(index_elements=index_elements, index_where=index_where)
        )
        return statement

    def complete(
        self, connection: Connection, outcomes: Sequence[Completed], now: datetime
    ) -> list[bool]:
        raw = driver_connection(connection)
        if complete_jobs(raw, outcomes, now) == len(outcomes):
            landed = [True] * len(outcomes)
        else:
            landed = _landed(connection, outcomes, now)
        count_completions(raw, [o for o, ok in zip(outcomes, landed, strict=True) if ok])
        return landed

    def add_metrics(self, connection: Connection, increments: Increments, shard: int) -> None:
        add_metrics(driver_connection(connection), increments, shard)

    def lock_row(self, query: Select[Any]) -> Select[Any]:
        # The transaction began with BEGIN IMMEDIATE: it holds the database's write lock, which
        # already keeps every other writer out until it ends.
        return query

    def notify_new_jobs(self, connection: Connection, due_at: datetime | None = None) -> None:
        """Nothing to send: idle workers watch `PRAGMA data_version` (see `dominus.jobs.wakeup`)."""

    def notify_cancel(self, connection: Connection, worker_id: str) -> None:
        """Nothing to send: workers poll for cancel requests."""

    # --- the worker loop's own connection, housekeeping ----------------------------------
    def settle_completed(
        self,
        outcomes: Sequence[Completed],
        now: datetime,
        claim_for: Sequence[ClaimRequest],
    ) -> tuple[list[bool], list[Job]] | None:
        claimed = self._loop.settle_completed(outcomes, now, claim_for)
        return None if claimed is None else ([True] * len(outcomes), claimed)

    def enqueue_plain(self, jobs: Sequence[NewJob], now: datetime) -> list[int]:
        # A driver connection of the backend's own: SQLAlchemy's pool and Connection events
        # cost more than this transaction's SQL (as for the loop's, ADR 0003). The job rows are
        # all it writes: they are counted from the rows later (ADR 0036).
        if len(jobs) == 1:  # one INSERT is a transaction of its own (the driver autocommits)
            return [self._connections.run(insert_plain_job, jobs[0], now)]
        with self._connections.lent() as raw, _write_transaction(raw):
            return insert_plain_jobs(raw, jobs, now)

    def count_enqueued(self, connection: Connection, job_types: Sequence[str]) -> None:
        """Nothing to write: enqueues are counted from their rows (ADR 0036)."""

    def uncounted_enqueues(self, connection: Connection) -> Mapping[str, int]:
        return enqueue_counts.uncounted(driver_connection(connection))

    def fold_enqueues(self, connection: Connection) -> None:
        enqueue_counts.fold(driver_connection(connection))

    def mark_enqueues_counted(self, connection: Connection) -> None:
        enqueue_counts.mark_counted(driver_connection(connection))

    def maintain(self) -> str | None:
        """Fold the enqueues made since the last fold into the counters (ADR 0036), so that a
        reading counts only the last few seconds' rows. Never urgent, so it never waits: it
        reads first in autocommit mode (nothing to fold: no transaction at all, no idle worker
        woken), and gives the write lock 50 ms before leaving the fold to the next round,
        where waiting the full busy timeout would hold up the reaper on the same thread."""
        with self._connections.lent() as raw:
            if enqueue_counts.all_counted(raw):
                return None
            (patience,) = raw.execute("PRAGMA busy_timeout").fetchone()
            raw.execute(f"PRAGMA busy_timeout = {FOLD_PATIENCE_MS}")
            try:
                with _write_transaction(raw):
                    enqueue_counts.fold(raw)
            finally:
                raw.execute(f"PRAGMA busy_timeout = {int(patience)}")
        return None

    def clock(self) -> Clock:
        # One host writes a SQLite file: its own clock is the database's.
        return utc_now

    def change_watcher(self) -> ChangeWatcher:
        if self._path is None:  # an in-memory database: no other process can commit to it
            return NoChangeWatcher()
        return SqliteDataVersionWatcher(self._path)

    def liveness_lock(self, worker_id: str) -> LivenessLock | None:
        if self._locks is None:
            return None
        return FileLivenessLock(self._locks, worker_id)

    def free_lock_owners(self, connection: Connection, owners: Sequence[LockOwner]) -> set[str]:
        if self._locks is None:
            return set()
        return free_flock_owners(owners, self._locks, socket.gethostname())

    def forget_dead_workers(self, worker_ids: Sequence[str]) -> None:
        if self._locks is not None:
            remove_lock_files(self._locks, worker_ids)

    def verify(self) -> None:
        if self._file is not None:
            self._file.check()


def _autocommit(raw: sqlite3.Connection) -> None:
    # The driver's own transaction handling off (as the engine opens its connections): a lone
    # INSERT is then a transaction of its own, and BEGIN IMMEDIATE is issued by hand.
    raw.isolation_level = None


def insert_plain_jobs(raw: sqlite3.Connection, jobs: Sequence[NewJob], now: datetime) -> list[int]:
    """Insert jobs without dedupe keys; returns their ids in order.

    The ids come from `last_insert_rowid()`: the table has no AUTOINCREMENT, so SQLite gives each
    new row max(rowid) + 1, and the write lock held by this transaction keeps any other writer
    out in between, which makes the ids of one executemany consecutive. The count is checked."""
    if len(jobs) == 1:
        return [insert_plain_job(raw, jobs[0], now)]
    if isinstance(jobs, JobsAlike):
        _insert_alike(raw, jobs, now)
    else:
        created = stored_time(now)
        raw.executemany(_INSERT, [_plain_row(job, now, created) for job in jobs])
    last_id = raw.execute("SELECT last_insert_rowid()").fetchone()[0]
    first_id = last_id - len(jobs) + 1
    (count,) = raw.execute(
        "SELECT count(*) FROM job_queue WHERE id BETWEEN ? AND ?", (first_id, last_id)
    ).fetchone()
    if count != len(jobs):  # pragma: no cover - only if SQLite changed its rowid rule
        raise RuntimeError("inserted job ids are not consecutive; cannot map them to the batch")
    return list(range(first_id, last_id + 1))


def _insert_alike(raw: sqlite3.Connection, jobs: JobsAlike, now: datetime) -> None:
    """The rows `_INSERT` would write for each of `jobs`, in order, a chunk per statement: the
    values they share bound once, only each payload's text per row. Binding a row's dozen
    values and stepping a statement per row cost twice the insert of the row itself."""
    # The template's row holds every shared value, in `_INSERT`'s order (its own payload text
    # is bound too, and unused: each row's comes from the VALUES list).
    shared = _plain_row(jobs.template, now, stored_time(now))
    documents = jobs.documents
    chunk = min(_ALIKE_CHUNK, raw.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) - len(shared))
    for start in range(0, len(documents), chunk):
        payloads = documents[start : start + chunk]
        raw.execute(_alike_sql(len(payloads)), (*shared, *payloads))


# Rows per statement of `_insert_alike`: each chunk size is a statement of its own, compiled
# once per connection (the driver's statement cache); the figure keeps a chunk well within
# SQLite's variable limit (32,766 since 3.32) and its compiled statement small.
_ALIKE_CHUNK = 1000
# `_insert_alike`'s value for each column: the template row's, numbered as `_plain_row` orders
# them, but the payload, which is each row's own.
_ALIKE_SHARED = {
    column.name: f"?{number}"
    for number, column in enumerate(
        (column for column in NEW_JOB_COLUMNS if column.fixed is None), 1
    )
} | {"payload": "alike.column1"}


@lru_cache(maxsize=64)
def _alike_sql(rows: int) -> str:
    """`_insert_alike`'s statement for `rows` rows: the template's row ?1 to ?12, then one
    payload text per row, each row numbered by a literal. The SELECT is ordered by that number,
    so the rows are inserted in the batch's order by the statement's own terms (without it,
    SQLite happens to keep a VALUES list's order, but nothing promises it; the sort costs about
    4k instructions a job of the ~66k), and the ids SQLite gives them are consecutive (see
    `insert_plain_jobs`): the ids map to the jobs."""
    values = ", ".join([f"(?, {row})" for row in range(rows)])
    selected = new_job_values(lambda column: _ALIKE_SHARED[column.name])
    return (
        f"INSERT INTO job_queue ({NEW_JOB_COLUMN_LIST}) SELECT {selected} "
        f"FROM (VALUES {values}) AS alike ORDER BY alike.column2"
    )


def insert_plain_job(raw: sqlite3.Connection, job: NewJob, now: datetime) -> int:
    """`insert_plain_jobs` of one job: its id."""
    job_id = raw.execute(_INSERT, _plain_row(job, now, stored_time(now))).lastrowid
    assert job_id is not None  # set by every INSERT into a rowid table
    return job_id


def _plain_row(job: NewJob, now: datetime, created: str) -> tuple[Any, ...]:
    """A job's values for `_INSERT`; `created` is `stored_time(now)`."""
    return (
        job.job_type,
        job.payload_json,
        job.priority,
        job.max_attempts,
        stored_time(job.run_at) if job.run_at != now else created,
        created,
        created,
        job.timeout_seconds,
        job.queue,
        job.concurrency_key,
        job.concurrency_limit,
        job.rate_key,
    )


def claim_jobs(
    raw: sqlite3.Connection,
    worker_id: str,
    job_types: Sequence[str],
    limit: int,
    now: datetime,
    queues: Sequence[str] | None = None,
) -> list[Job]:
    stamp = stored_time(now)
    keyed = raw.execute(HAS_KEYED_PENDING).fetchone() is not None
    rows = raw.execute(
        claim_sql(len(job_types), len(queues or ()), keyed),
        claim_parameters(worker_id, stamp, job_types, limit, queues, keyed),
    ).fetchall()

    # Texts already parsed in this claim: a job's `run_at` is usually its `created_at`, and jobs
    # enqueued together share theirs. Each is parsed once (a datetime is immutable: shared).
    parsed: dict[str, datetime | None] = {}

    def claimed_time(text: str | None) -> datetime | None:
        # The claim timestamps this statement just wrote are `now`: known without parsing
        # (this runs for every timestamp of every claimed job).
        if text is None:
            return None
        if text == stamp:
            return now
        if text in parsed:
            return parsed[text]
        value = parsed[text] = _time(text)
        return value

    jobs = [job_from_fields(row, claimed_time, _document) for row in rows]
    jobs.sort(key=lambda job: (-job.priority, job.run_at, job.id))
    if any(job.rate_key is not None for job in jobs):
        # In the claim's transaction: a job refused a token is never seen running.
        return gate(SqliteGate(raw, stored_time, _time), jobs, now)
    return jobs


def complete_jobs(raw: sqlite3.Connection, outcomes: Sequence[Completed], now: datetime) -> int:
    """Mark completed attempts, fenced on their claims. Returns how many rows changed.

    One UPDATE joined with the outcomes' values per chunk, not one per outcome: each row is
    still fenced on its own claim, and a statement run once costs less than one run per row
    (about 10k instructions a job at 64). A job given twice changes once, so the count falls
    short as it did when one statement ran per outcome."""
    stamp = stored_time(now)
    changed = 0
    for start in range(0, len(outcomes), _COMPLETE_CHUNK):
        chunk = outcomes[start : start + _COMPLETE_CHUNK]
        parameters: list[Any] = [stamp]
        for outcome in chunk:
            claim = outcome.claim
            parameters += (
                claim.job_id,
                claim.worker_id,
                claim.attempt,
                _encoded(outcome.result),
                _encoded(outcome.progress),
            )
        changed += raw.execute(_complete_sql(len(chunk)), parameters).rowcount
    return changed


# Rows per completing UPDATE: one prepared statement per chunk size (kept in the driver's
# statement cache), its parameters well within SQLite's limit.
_COMPLETE_CHUNK = 64


@lru_cache(maxsize=_COMPLETE_CHUNK)
def _complete_sql(rows: int) -> str:
    values = ", ".join(["(?, ?, ?, ?, ?)"] * rows)
    return (
        "UPDATE job_queue SET status = 'completed', result = done.column4, "
        "progress = COALESCE(done.column5, job_queue.progress), finished_at = ?1, updated_at = ?1 "
        f"FROM (VALUES {values}) AS done "
        "WHERE job_queue.id = done.column1 AND job_queue.locked_by = done.column2 "
        "AND job_queue.attempts = done.column3 AND job_queue.status = 'running'"
    )


def _landed(connection: Connection, outcomes: Sequence[Completed], now: datetime) -> list[bool]:
    """Some claims were lost (the job was reclaimed while its worker was silent). Rare: find out
    which completions landed by looking for the row this transaction just wrote."""
    rows = connection.execute(
        select(job_queue.c.id, job_queue.c.locked_by, job_queue.c.attempts).where(
            job_queue.c.id.in_([outcome.claim.job_id for outcome in outcomes]),
            job_queue.c.status == "completed",
            job_queue.c.finished_at == literal(now, UTCDateTime),
        )
    )
    landed = {Claim(row.id, row.locked_by, row.attempts) for row in rows}
    return [outcome.claim in landed for outcome in outcomes]


def count_completions(raw: sqlite3.Connection, completed: Sequence[Completed]) -> None:
    if completed:
        increments = Increments().completions(completed)
        add_metrics(raw, increments, shard_for(completed[0].claim.worker_id))


def add_metrics(raw: sqlite3.Connection, increments: Increments, shard: int) -> None:
    if increments:
        raw.executemany(_UPSERT_METRICS, increments.rows(shard))


class _LoopConnection:
    """The worker loop's own connection, held for the thread's life, for its hottest
    transaction: record a batch of completed attempts and claim the freed slots. Checking a
    connection out of the pool and through SQLAlchemy's transaction events for every tick cost
    more than the transaction's SQL (ADR 0003). Each thread gets its own connection, so it is
    never shared; anything that is not the common case goes back to the general path."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._local = threading.local()

    def settle_completed(
        self,
        outcomes: Sequence[Completed],
        now: datetime,
        claim_for: Sequence[ClaimRequest],
    ) -> list[Job] | None:
        """Complete every outcome and claim, in one transaction. None (nothing written) when a
        completion's claim turned out to be lost: the caller then takes the general path, which
        records that."""
        with database_errors():
            raw = self._connection()
        try:
            raw.execute("BEGIN IMMEDIATE")
            try:
                if outcomes and complete_jobs(raw, outcomes, now) != len(outcomes):
                    raw.rollback()
                    return None
                count_completions(raw, outcomes)
                claimed = ClaimedJobs.joined(
                    claim_jobs(
                        raw,
                        request.worker_id,
                        request.job_types,
                        request.limit,
                        now,
                        request.queues,
                    )
                    for request in claim_for
                )
                raw.commit()
            except BaseException:
                raw.rollback()
                raise
        except sqlite3.Error as error:
            self._forget_if_broken(error)
            raise translated(error) from error
        return claimed

    def _connection(self) -> sqlite3.Connection:
        raw: sqlite3.Connection | None = getattr(self._local, "raw", None)
        if raw is None:
            raw = self._local.raw = _loop_connection(self._engine)
        return raw

    def _forget_if_broken(self, error: sqlite3.Error) -> None:
        if is_busy_error(error):
            return
        raw: sqlite3.Connection | None = getattr(self._local, "raw", None)
        self._local.raw = None
        if raw is not None:
            with suppress(sqlite3.Error):
                raw.close()


def _loop_connection(engine: Engine) -> sqlite3.Connection:
    """A connection of the engine's making, taken out of its pool for good: the loop's thread
    holds it for its life, and a broken one is closed, never handed to another transaction."""
    pooled = engine.raw_connection()
    raw = pooled.driver_connection
    pooled.detach()
    assert isinstance(raw, sqlite3.Connection)
    return raw


@contextmanager
def _write_transaction(raw: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE (the write lock up front, so a busy database fails at the start, not at
    the first write), committed when the block ends, rolled back if it raises."""
    raw.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        raw.rollback()
        raise
    raw.commit()
