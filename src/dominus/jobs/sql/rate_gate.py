"""The claim's rate gate (ADR 0053, addendum "a job's rate key"): each claimed job that names a
`rate_key` takes a token from that key's limiter before its worker sees it; a job that gets none
goes back to pending, due when a token should be free (or when the key's pause ends), its
attempt handed back as a snooze's is, and no event written, as a job held back by its
concurrency key.

Tokens are the limiters' own slots (`dominus.jobs.sql.limits`): one statement per key takes as
many of the key's free slots as the claim has jobs of it, oldest first, only while the key is not
paused, so a job's token and a handler's `context.limiter(key)` grant count against the same
limit. A key with no row in `rate_limits` (never configured nor paused), or with a row but no
limit, is unlimited: its jobs are held back only by a pause.

The caller runs the gate only when a claimed job names a rate key, so a claim of jobs without one
sends nothing more. Where it runs: SQLite and `store.claim` on PostgreSQL, in the claim's own
transaction (a held-back job is never seen running); the PostgreSQL worker loop, whose claim,
completions and COMMIT go in one round trip before the claim's rows are known, takes the tokens
in that round trip (`PostgresTakes.take_claimed`) while its last claim had rate-keyed jobs, and
hands back what got none in a second transaction right after.

A take stamps its slots with the claim's `now` on SQLite, and by default with the server's clock
read in the statement on PostgreSQL, as `RateLimitStore.grant` does (ADR 0053, "Whose clock").
The pause check, and the wake times of the jobs handed back (estimates), keep the claim's `now`.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from dominus.jobs.model import ClaimedJobs, Job
from dominus.jobs.rate_limit import CLOCK_SET_BACK_US, microseconds, moment_of

if TYPE_CHECKING:  # SQLite alone never imports the PostgreSQL driver
    import psycopg

# The key's period, or NULL (so no slot qualifies) while it is paused or has no limit.
_PERIOD = (
    "(SELECT period_us FROM rate_limits WHERE key = :key "
    "AND (paused_until IS NULL OR paused_until <= :now))"
)
# The moment a take stamps its slots with, and measures their age from. The caller's `now`
# (:now_us), or on PostgreSQL by default the server's clock read once in the statement itself
# (ADR 0053, "Whose clock"): `_SERVER_MOMENT` is a CTE evaluated once (MATERIALIZED), which the
# statement reads as `_SERVER_NOW_US`, so the stamp and the age condition use one value.
_CALLER_NOW_US = ":now_us"
_SERVER_MOMENT = (
    "moment AS MATERIALIZED (SELECT "
    "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS now_us)"
)
_SERVER_NOW_US = "(SELECT now_us FROM moment)"
# Take up to :wanted slots a whole period old, oldest first (the grant of ADR 0053 for several
# jobs at once). The condition is checked again on each slot's latest version: on PostgreSQL,
# under READ COMMITTED, a slot another claim took meanwhile is left alone, and SKIP LOCKED keeps
# two claims from waiting on each other's slots. MATERIALIZED: the slots are chosen once (a
# subquery joined into the UPDATE may be run again per row, its LIMIT then taking more).
_TAKE = f"""
    WITH {{moment}} free AS MATERIALIZED (
        SELECT slot AS free_slot FROM rate_limit_grants
         WHERE key = :key AND granted_us <= {{now_us}} - {_PERIOD}
         ORDER BY granted_us LIMIT :wanted {{lock}}
    )
    UPDATE rate_limit_grants SET granted_us = {{now_us}}
     WHERE key = :key AND slot IN (SELECT free_slot FROM free) {{recheck}}
    RETURNING slot
"""
_STATE = "SELECT limit_count, period_us, paused_until FROM rate_limits WHERE key = :key"
# The key's earliest slots after the take: when its next tokens come free, in order.
_NEXT_FREE = (
    "SELECT granted_us FROM rate_limit_grants WHERE key = :key "
    "ORDER BY granted_us, slot LIMIT :count"
)
# Back to pending without spending the attempt (fenced on the claim, as a snooze).
_HOLD = """
    UPDATE job_queue SET status = 'pending', attempts = attempts - 1, locked_by = NULL,
           heartbeat_at = NULL, run_at = :run_at, updated_at = :now
     WHERE id = :id AND locked_by = :worker_id AND attempts = :attempt AND status = 'running'
"""

# SQLite holds the write lock from BEGIN IMMEDIATE: nobody can take a slot in between, and a
# second condition on `granted_us` would lead its planner to walk every old slot of the key
# instead of the primary key's few.
SQLITE_TAKE = _TAKE.format(moment="", now_us=_CALLER_NOW_US, lock="", recheck="")


def _pyformat(sql: str) -> str:
    """psycopg's spelling of the named parameters (`:name` → `%(name)s`)."""
    return re.sub(r"(?<![:\w]):(\w+)", r"%(\1)s", sql)


def _moment_and_now_us(server_clock: bool) -> tuple[str, str]:
    """The CTE to put first in a take's WITH (with its comma), and its `now_us`."""
    return (_SERVER_MOMENT + ",", _SERVER_NOW_US) if server_clock else ("", _CALLER_NOW_US)


def _postgres_take(server_clock: bool) -> str:
    moment, now_us = _moment_and_now_us(server_clock)
    return _pyformat(
        _TAKE.format(
            moment=moment,
            now_us=now_us,
            lock="FOR UPDATE SKIP LOCKED",
            recheck=f"AND granted_us <= {now_us} - {_PERIOD}",
        )
    )


POSTGRES_NEXT_FREE = _pyformat(_NEXT_FREE)

# The worker loop's takes on PostgreSQL, sent in its claim's pipeline before the COMMIT, for the
# rows the claim just wrote (this worker's, stamped `now` by the claim; found through the running
# jobs' index): each rate key among them takes as many tokens as it has jobs there. One row per
# token taken. The loop sends it while its last claim had rate-keyed jobs, so a drain of such
# jobs takes its tokens in the claim's own round trip and transaction.
_KEY_PERIOD = _PERIOD.replace(":key", "{key}")


def _postgres_take_claimed(server_clock: bool) -> str:
    moment, now_us = _moment_and_now_us(server_clock)
    return _pyformat(f"""
    WITH {moment} wanted AS (
        SELECT rate_key AS key, count(*) AS jobs FROM job_queue
         WHERE status = 'running' AND locked_by = ANY(:workers) AND heartbeat_at = :now
           AND started_at = :now AND rate_key IS NOT NULL
         GROUP BY rate_key
    ), free AS MATERIALIZED (
        SELECT wanted.key, oldest.slot FROM wanted CROSS JOIN LATERAL (
            SELECT slot FROM rate_limit_grants
             WHERE key = wanted.key
               AND granted_us <= {now_us} - {_KEY_PERIOD.format(key="wanted.key")}
             ORDER BY granted_us LIMIT wanted.jobs FOR UPDATE SKIP LOCKED
        ) AS oldest
    )
    UPDATE rate_limit_grants AS grant_row SET granted_us = {now_us}
      FROM free
     WHERE grant_row.key = free.key AND grant_row.slot = free.slot
       AND grant_row.granted_us <= {now_us} - {_KEY_PERIOD.format(key="grant_row.key")}
    RETURNING grant_row.key
""")


@dataclass(frozen=True)
class PostgresTakes:
    """The gate's takes on PostgreSQL, stamped by one clock: `take` for the keys given,
    `take_claimed` for the rows the worker loop's claim just wrote."""

    take: str
    take_claimed: str


_TAKES = {
    server_clock: PostgresTakes(_postgres_take(server_clock), _postgres_take_claimed(server_clock))
    for server_clock in (False, True)
}


def postgres_takes(server_clock: bool) -> PostgresTakes:
    """The takes stamped by the server's clock (True) or by the caller's `now`."""
    return _TAKES[server_clock]


POSTGRES_HOLD = _pyformat(_HOLD)


@dataclass(frozen=True)
class KeyLimit:
    """A key's row in `rate_limits`: its limit (None: none) and its pause's end."""

    count: int | None
    period_us: int | None
    paused_until: datetime | None


@dataclass(frozen=True)
class Held:
    """A claimed job handed back, due at `run_at`."""

    job: Job
    run_at: datetime


class GateStatements(Protocol):
    """The gate's statements on one backend's connection, in the claim's transaction."""

    def take(self, wanted: dict[str, int], now: datetime) -> dict[str, int]:
        """For each key, take up to `wanted[key]` tokens; how many each key got."""
        ...

    def limits(self, keys: Sequence[str]) -> dict[str, KeyLimit]:
        """The rows of `keys` that have one in `rate_limits`."""
        ...

    def next_free(self, key: str, count: int) -> list[int]:
        """The key's `count` earliest slot stamps (µs since the epoch), ascending."""
        ...

    def hold(self, held: Sequence[Held], now: datetime) -> None: ...


def gate(statements: GateStatements, jobs: list[Job], now: datetime) -> ClaimedJobs:
    """The claimed `jobs` that got their key's token (and those without a rate key), in claim
    order; the others are handed back to pending through `statements.hold`."""
    by_key: dict[str, list[Job]] = {}
    for job in jobs:
        if job.rate_key is not None:
            by_key.setdefault(job.rate_key, []).append(job)
    taken = statements.take({key: len(keyed) for key, keyed in by_key.items()}, now)
    short = [key for key, keyed in by_key.items() if taken.get(key, 0) < len(keyed)]
    if not short:
        return ClaimedJobs(jobs)
    limits = statements.limits(short)
    held: list[Held] = []
    for key in short:
        waiting = by_key[key][taken.get(key, 0) :]
        wake = _wake_times(statements, key, limits.get(key), len(waiting), now)
        if not wake:
            continue  # unlimited and not paused: they run
        held.extend(Held(job, at) for job, at in zip(waiting, wake, strict=True))
    if not held:
        return ClaimedJobs(jobs)
    statements.hold(held, now)
    gone = {entry.job.id for entry in held}
    return ClaimedJobs(
        (job for job in jobs if job.id not in gone), (entry.run_at for entry in held)
    )


def _wake_times(
    statements: GateStatements, key: str, limit: KeyLimit | None, count: int, now: datetime
) -> list[datetime]:
    """When each of `count` jobs refused a token of `key` should be tried again (none: the key
    is unlimited and not paused, so they run). Spread over the key's coming free slots, so the
    jobs a claim hands back do not all come due at one instant: the j-th waits for the j-th slot
    to free (a whole period later per round of the limit)."""
    paused_until = limit.paused_until if limit is not None else None
    if paused_until is not None and paused_until <= now:
        paused_until = None
    if limit is None or limit.count is None or limit.period_us is None:
        return [] if paused_until is None else [paused_until] * count
    now_us = microseconds(now)
    stamps = statements.next_free(key, min(count, limit.count)) or [now_us]
    wake = []
    for index in range(count):
        rounds = 1 + index // limit.count
        due_us = stamps[index % len(stamps)] + limit.period_us * rounds
        # A slot far in the future means a clock set back (ADR 0053): waited out one minute.
        latest_us = now_us + limit.period_us * rounds + CLOCK_SET_BACK_US
        at = moment_of(max(now_us, min(due_us, latest_us)))
        wake.append(at if paused_until is None else max(at, paused_until))
    return wake


def hold_parameters(held: Sequence[Held], now: Any, time: Any) -> list[dict[str, Any]]:
    """`_HOLD`'s parameters for each held job; `time` turns a datetime into the driver's
    value."""
    return [
        {
            "run_at": time(entry.run_at),
            "now": now,
            "id": entry.job.id,
            "worker_id": entry.job.locked_by,
            "attempt": entry.job.attempts,
        }
        for entry in held
    ]


class SqliteGate:
    """The gate's statements on the claim's `sqlite3` connection (inside its BEGIN IMMEDIATE).
    `stamp` and `read_time` are the backend's spelling of a stored timestamp."""

    def __init__(
        self,
        raw: sqlite3.Connection,
        stamp: Callable[[datetime], str],
        read_time: Callable[[str | None], datetime | None],
    ) -> None:
        self._raw = raw
        self._stamp = stamp
        self._read_time = read_time

    def take(self, wanted: dict[str, int], now: datetime) -> dict[str, int]:
        moment = {"now_us": microseconds(now), "now": self._stamp(now)}
        return {
            key: len(
                self._raw.execute(SQLITE_TAKE, {**moment, "key": key, "wanted": count}).fetchall()
            )
            for key, count in wanted.items()
        }

    def limits(self, keys: Sequence[str]) -> dict[str, KeyLimit]:
        found = {}
        for key in keys:
            row = self._raw.execute(_STATE, {"key": key}).fetchone()
            if row is not None:
                found[key] = KeyLimit(row[0], row[1], self._read_time(row[2]))
        return found

    def next_free(self, key: str, count: int) -> list[int]:
        rows = self._raw.execute(_NEXT_FREE, {"key": key, "count": count})
        return [row[0] for row in rows]

    def hold(self, held: Sequence[Held], now: datetime) -> None:
        self._raw.executemany(_HOLD, hold_parameters(held, self._stamp(now), self._stamp))


class PostgresGate:
    """The gate's statements on a psycopg connection, in its open transaction: the takes of all
    keys in one pipeline (one round trip), after `prelude` if given, stamped by the server's
    clock or the caller's `now` as `takes` are."""

    def __init__(
        self, raw: psycopg.Connection[Any], takes: PostgresTakes, prelude: str | None = None
    ) -> None:
        self._raw = raw
        self._takes = takes
        self._prelude = prelude

    def take(self, wanted: dict[str, int], now: datetime) -> dict[str, int]:
        moment = {"now_us": microseconds(now), "now": now}
        with self._raw.pipeline():
            if self._prelude is not None:
                self._raw.execute(self._prelude)
            taken = {
                key: self._raw.execute(self._takes.take, {**moment, "key": key, "wanted": count})
                for key, count in wanted.items()
            }
        return {key: len(cursor.fetchall()) for key, cursor in taken.items()}

    def limits(self, keys: Sequence[str]) -> dict[str, KeyLimit]:
        rows = self._raw.execute(
            "SELECT key, limit_count, period_us, paused_until FROM rate_limits "
            "WHERE key = ANY(%(keys)s)",
            {"keys": list(keys)},
        )
        return {row[0]: KeyLimit(row[1], row[2], row[3]) for row in rows}

    def next_free(self, key: str, count: int) -> list[int]:
        rows = self._raw.execute(POSTGRES_NEXT_FREE, {"key": key, "count": count})
        return [row[0] for row in rows]

    def hold(self, held: Sequence[Held], now: datetime) -> None:
        self._raw.cursor().executemany(POSTGRES_HOLD, hold_parameters(held, now, _same))


class PrepaidPostgresGate(PostgresGate):
    """The gate after the loop's claim took its tokens in its own pipeline
    (`PostgresTakes.take_claimed`): `taken` holds how many each key got."""

    def __init__(
        self, raw: psycopg.Connection[Any], takes: PostgresTakes, taken: dict[str, int]
    ) -> None:
        super().__init__(raw, takes)
        self._taken = taken

    def take(self, wanted: dict[str, int], now: datetime) -> dict[str, int]:
        return {key: self._taken.get(key, 0) for key in wanted}


def take_claimed_parameters(workers: Sequence[str], now: datetime) -> dict[str, Any]:
    return {"workers": sorted(set(workers)), "now": now, "now_us": microseconds(now)}


def _same(value: datetime) -> datetime:
    return value
