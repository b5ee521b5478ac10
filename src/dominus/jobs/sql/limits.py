"""Rate limiters in the database: configure, grant, pause, resume, list (ADR 0053).

A key's limit of N per period P is N rows of `rate_limit_grants`, each the time of one of the
key's N latest grants. A grant is one UPDATE that moves the oldest slot to now, and only when
that slot is at least P old and the key is not paused: then the window (now − P, now] holds the
N − 1 other slots at most, plus this grant. The same statement serves both databases: on
SQLite the write lock (BEGIN IMMEDIATE) serialises grants; on PostgreSQL the oldest slot is
taken `FOR UPDATE SKIP LOCKED` (two grants take two slots, never one twice) and the UPDATE
re-checks its condition on the row's latest version under READ COMMITTED.

Times are whole microseconds since the epoch, compared as integers: exact, and the same
arithmetic on both databases. Every method takes `now`, and the caller's clock decides (ADR
0005), but for the moment a grant or a restamp writes on PostgreSQL: that is the server's clock,
read once in the statement itself (ADR 0053, "Whose clock"), unless the store is made with
`server_clock=False`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import (
    CTE,
    BigInteger,
    ColumnElement,
    Connection,
    Engine,
    cast,
    delete,
    exists,
    extract,
    func,
    insert,
    literal,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.sql.dml import Update

from dominus.db.engine import read_only
from dominus.db.errors import database_errors
from dominus.errors import RateLimitKeyNotFoundError
from dominus.jobs.model import EventKind
from dominus.jobs.rate_limit import (
    CLOCK_SET_BACK_US,
    KeyState,
    RateLimit,
    microseconds,
    moment_of,
)
from dominus.jobs.sql.backend import Backend, backend_for, stamps_with_server_clock
from dominus.jobs.sql.tables import (
    SNOOZED_FOR_KEY,
    job_events,
    job_queue,
    rate_limit_grants,
    rate_limits,
)

T = TypeVar("T")

_grants = rate_limit_grants.c
_limits = rate_limits.c
_jobs = job_queue.c


@dataclass(frozen=True)
class Granted:
    """A grant made: the slot it took and the moment stamped in it (µs since the epoch), which
    `restamp` is given back."""

    slot: int
    granted_us: int

    @property
    def at(self) -> datetime:
        return moment_of(self.granted_us)


@dataclass(frozen=True)
class Denial:
    """Why a grant was refused, as read right after: the pause's end and the oldest slot."""

    limit: RateLimit | None
    paused_until: datetime | None
    oldest_us: int | None
    newest_us: int | None


class RateLimitStore:
    """The limiters' rows on a SQLAlchemy engine (SQLite or PostgreSQL). Each method is one
    transaction. `server_clock`: whether grants are stamped with the database server's clock
    (None: the database's default, see `backend.stamps_with_server_clock`)."""

    def __init__(self, engine: Engine, *, server_clock: bool | None = None) -> None:
        self._engine = engine
        self._reader = read_only(engine)
        self._backend: Backend = backend_for(engine)
        self._server_clock = stamps_with_server_clock(engine, server_clock)

    @property
    def engine(self) -> Engine:
        return self._engine

    def _write(self, work: Callable[[Connection], T]) -> T:
        with database_errors(), self._engine.begin() as connection:
            return work(connection)

    def _read(self, work: Callable[[Connection], T]) -> T:
        with database_errors(), self._reader.begin() as connection:
            return work(connection)

    # --- grants ------------------------------------------------------------------------------
    def grant(self, key: str, now: datetime) -> Granted | None:
        """Take a slot of `key` now if one is a whole period old and the key is not paused
        at `now`: the slot taken and the moment stamped (`now`, or the server's clock), or None
        (always None for a key without a limit, see `denial`). One statement."""
        moment = self._moment(now)
        now_us = moment.now_us
        oldest = (
            select(_grants.slot)
            .where(_grants.key == key)
            .order_by(_grants.granted_us)
            .limit(1)
            .with_for_update(skip_locked=True)
            .scalar_subquery()
        )
        # NULL (so no row matches) when the key is paused or has no limit.
        period = (
            select(_limits.period_us).where(_limits.key == key, _not_paused(now)).scalar_subquery()
        )
        statement = (
            update(rate_limit_grants)
            .where(
                _grants.key == key,
                _grants.slot == oldest,
                _grants.granted_us <= now_us - period,
            )
            .values(granted_us=now_us)
            .returning(_grants.slot, _grants.granted_us)
        )
        row = self._write(lambda conn: conn.execute(moment.stated(statement)).first())
        return None if row is None else Granted(row.slot, row.granted_us)

    def restamp(self, key: str, slot: int, granted: datetime, now: datetime) -> bool:
        """Count the grant of `slot` made at `granted` from now (`now`, or the server's clock)
        instead: the request it let through has been answered. Only while the slot still holds
        that grant; one statement."""
        moment = self._moment(now)
        statement = (
            update(rate_limit_grants)
            .where(
                _grants.key == key,
                _grants.slot == slot,
                _grants.granted_us == microseconds(granted),
                _grants.granted_us < moment.now_us,
            )
            .values(granted_us=moment.now_us)
        )
        return self._write(lambda conn: conn.execute(moment.stated(statement)).rowcount == 1)

    def _moment(self, now: datetime) -> _Moment:
        return _Moment.of_server() if self._server_clock else _Moment.of_caller(now)

    def denial(self, key: str, now: datetime) -> Denial | None:
        """What keeps `key` from a grant now; None when the key has no row (no limit, no
        pause). One read. Slots stamped more than a minute after `now` (the clock was set back)
        are brought back to `now` (a write, only then), so a clock set back by an hour waits a
        minute and a period at most, not the hour."""
        denial = self._read(lambda conn: _denial(conn, key, now))
        now_us = microseconds(now)
        if denial is None or denial.newest_us is None:
            return denial
        if denial.newest_us <= now_us + CLOCK_SET_BACK_US:
            return denial
        self._write(
            lambda conn: conn.execute(
                update(rate_limit_grants)
                .where(_grants.key == key, _grants.granted_us > now_us + CLOCK_SET_BACK_US)
                .values(granted_us=now_us)
            )
        )
        oldest = now_us if denial.oldest_us is None else min(denial.oldest_us, now_us)
        return Denial(denial.limit, denial.paused_until, oldest, now_us)

    # --- configuration -----------------------------------------------------------------------
    def configure(self, key: str, limit: RateLimit | None, now: datetime) -> KeyState:
        """Set `key`'s limit (None: none, pauses only). Shrinking keeps the latest grants, so
        the new limit holds over every window, the ones across the change included."""
        return self._write(lambda conn: self._configure(conn, key, limit, now))

    def _configure(
        self, connection: Connection, key: str, limit: RateLimit | None, now: datetime
    ) -> KeyState:
        self._ensure_row(connection, key, now)
        # Held until commit: configures of one key (workers starting together) take turns.
        connection.execute(select(_limits.key).where(_limits.key == key).with_for_update())
        connection.execute(
            update(rate_limits)
            .where(_limits.key == key)
            .values(
                limit_count=None if limit is None else limit.count,
                period_us=None if limit is None else limit.period_us,
                updated_at=now,
            )
        )
        slots = [
            row.slot
            for row in connection.execute(
                select(_grants.slot)
                .where(_grants.key == key)
                .order_by(_grants.granted_us.desc(), _grants.slot)
            )
        ]
        wanted = 0 if limit is None else limit.count
        if len(slots) > wanted:
            connection.execute(
                delete(rate_limit_grants).where(
                    _grants.key == key, _grants.slot.in_(slots[wanted:])
                )
            )
        elif len(slots) < wanted:
            first = max(slots, default=-1) + 1
            connection.execute(
                insert(rate_limit_grants),
                [
                    {"key": key, "slot": slot, "granted_us": 0}
                    for slot in range(first, first + wanted - len(slots))
                ],
            )
        if len(slots) != wanted and connection.dialect.name == "postgresql":
            _refresh_statistics(connection)
        return _state_of(connection, key, now)

    # --- pauses ------------------------------------------------------------------------------
    def pause(self, key: str, until: datetime, reason: str, now: datetime) -> KeyState:
        """Pause `key` until `until` for every process, unless it is paused until later
        already (the later pause and its reason are kept). A key need not exist first."""
        return self._write(lambda conn: self._pause(conn, key, until, reason, now))

    def _pause(
        self, connection: Connection, key: str, until: datetime, reason: str, now: datetime
    ) -> KeyState:
        self._ensure_row(connection, key, now)
        # Re-checked on the row's latest version (PostgreSQL, READ COMMITTED; SQLite holds the
        # write lock): of two pauses at once, the later end wins whatever the commit order.
        connection.execute(
            update(rate_limits)
            .where(
                _limits.key == key,
                or_(_limits.paused_until.is_(None), _limits.paused_until < until),
            )
            .values(paused_until=until, pause_reason=reason or None, updated_at=now)
        )
        return _state_of(connection, key, now)

    def resume(self, key: str, now: datetime) -> KeyState:
        """End `key`'s pause now, and make due now the pending jobs that wait for it: those
        whose `rate_key` it is, and those a handler's RateLimited(key) snoozed (their latest
        event says so). Raises RateLimitKeyNotFoundError for a key never configured nor
        paused."""

        def work(connection: Connection) -> KeyState:
            changed = connection.execute(
                update(rate_limits)
                .where(_limits.key == key)
                .values(paused_until=None, pause_reason=None, updated_at=now)
            )
            if not changed.rowcount:
                raise RateLimitKeyNotFoundError(f"no rate-limit key {key!r}")
            moved = _bring_forward(connection, key, now)
            return replace(_state_of(connection, key, now), brought_forward=moved)

        return self._write(work)

    # --- reading -----------------------------------------------------------------------------
    def get(self, key: str, now: datetime) -> KeyState:
        """Raises RateLimitKeyNotFoundError."""
        return self._read(lambda conn: _state_of(conn, key, now))

    def list(self, now: datetime) -> list[KeyState]:
        """Every key configured or paused, by key."""
        rows = self._read(
            lambda conn: conn.execute(select(rate_limits).order_by(_limits.key)).all()
        )
        return [_state_from_row(row, now) for row in rows]

    def _ensure_row(self, connection: Connection, key: str, now: datetime) -> None:
        connection.execute(
            self._backend.insert_or_ignore(
                rate_limits,
                {
                    "key": key,
                    "limit_count": None,
                    "period_us": None,
                    "paused_until": None,
                    "pause_reason": None,
                    "updated_at": now,
                },
            )
        )


@dataclass(frozen=True)
class _Moment:
    """The moment a statement stamps grants with: the caller's `now` as a parameter, or the
    server's clock read once in the statement (a MATERIALIZED CTE, so the stamp and the age
    condition see one value, however many rows the statement looks at)."""

    now_us: ColumnElement[int]
    cte: CTE | None = None

    @classmethod
    def of_caller(cls, now: datetime) -> _Moment:
        return cls(literal(microseconds(now), BigInteger))

    @classmethod
    def of_server(cls) -> _Moment:
        server_us = cast(extract("epoch", func.clock_timestamp()) * 1_000_000, BigInteger)
        cte = select(server_us.label("now_us")).cte("moment").prefix_with("MATERIALIZED")
        return cls(select(cte.c.now_us).scalar_subquery(), cte)

    def stated(self, statement: Update) -> Update:
        """`statement` with the CTE it reads the moment from, if any."""
        return statement if self.cte is None else statement.add_cte(self.cte)


def _refresh_statistics(connection: Connection) -> None:
    """ANALYZE the slots after their number changed. A take reads a key's oldest free slots in
    `granted_us` order: with statistics from before a limit of thousands was configured, the
    planner expects a couple of rows, reads and sorts every free slot of the key instead of
    walking the index to the first few, and settles them with a nested loop over all of them
    (a 10,000/s limit: 2 ms a take against 1 ms after, most of that the commit). Autovacuum
    would analyze the table a minute or so later; a worker configures its limits as it starts.
    Inside the transaction (ANALYZE may be): its lock lets reads and writes through."""
    connection.execute(text("ANALYZE rate_limit_grants"))


def _bring_forward(connection: Connection, key: str, now: datetime) -> int:
    """Make due now the pending jobs waiting for `key`; how many. Those naming it as their
    `rate_key` through their partial index; those snoozed by RateLimited(key) by a walk of the
    pending jobs not yet due, each checked against its latest event (one probe of the events'
    job index): a resume is an operator's rare act, and this keeps the snooze's write as it
    was."""
    waiting = (_jobs.status == "pending", _jobs.run_at > now)
    keyed = connection.execute(
        update(job_queue)
        .where(*waiting, _jobs.rate_key.is_not(None), _jobs.rate_key == key)
        .values(run_at=now, updated_at=now)
    ).rowcount
    event, later = job_events.alias("event"), job_events.alias("later")
    snoozed_for_key = exists().where(
        event.c.job_id == _jobs.id,
        event.c.kind == EventKind.SNOOZED.value,
        event.c.details[SNOOZED_FOR_KEY].as_string() == key,
        ~exists().where(later.c.job_id == event.c.job_id, later.c.id > event.c.id),
    )
    snoozed = connection.execute(
        update(job_queue).where(*waiting, snoozed_for_key).values(run_at=now, updated_at=now)
    ).rowcount
    return keyed + snoozed


def _denial(connection: Connection, key: str, now: datetime) -> Denial | None:
    of_key = _grants.key == key
    row = connection.execute(
        select(
            _limits.limit_count,
            _limits.period_us,
            _limits.paused_until,
            select(func.min(_grants.granted_us)).where(of_key).scalar_subquery(),
            select(func.max(_grants.granted_us)).where(of_key).scalar_subquery(),
        ).where(_limits.key == key)
    ).first()
    if row is None:
        return None
    limit_count, period_us, paused_until, oldest, newest = row
    return Denial(
        limit=_limit_of(limit_count, period_us),
        paused_until=paused_until if _is_paused(paused_until, now) else None,
        oldest_us=oldest,
        newest_us=newest,
    )


def _not_paused(now: datetime) -> Any:
    return or_(_limits.paused_until.is_(None), _limits.paused_until <= now)


def _is_paused(paused_until: datetime | None, now: datetime) -> bool:
    return paused_until is not None and paused_until > now


def _limit_of(count: int | None, period_us: int | None) -> RateLimit | None:
    if count is None or period_us is None:
        return None
    return RateLimit(count, period_us / 1_000_000)


def _state_of(connection: Connection, key: str, now: datetime) -> KeyState:
    row = connection.execute(select(rate_limits).where(_limits.key == key)).first()
    if row is None:
        raise RateLimitKeyNotFoundError(f"no rate-limit key {key!r}")
    return _state_from_row(row, now)


def _state_from_row(row: Any, now: datetime) -> KeyState:
    paused = _is_paused(row.paused_until, now)
    return KeyState(
        key=row.key,
        limit=_limit_of(row.limit_count, row.period_us),
        paused_until=row.paused_until if paused else None,
        pause_reason=row.pause_reason if paused else None,
        updated_at=row.updated_at,
    )
