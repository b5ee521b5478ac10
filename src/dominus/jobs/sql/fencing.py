"""Handler transactions fenced on the attempt's claim (ADR 0024).

A handler's own writes (a pipeline's checkpoints and results) go through a transaction that
checks, in that same transaction, that the attempt still holds its claim: the job row still
`running`, locked by this worker, at this attempt number, the same predicate (`fenced`) the
worker's settle uses. The check runs twice: first, so a lost attempt stops before it does any
work; and last, just before COMMIT, holding the job row's lock, so no reclaim can slip in
between the check and the commit.

- SQLite: the transaction starts with BEGIN IMMEDIATE and so holds the database's write lock
  from its first statement; a reaper cannot write in between anyway.
- PostgreSQL: the last check takes `FOR NO KEY UPDATE` on the job row, the lock every UPDATE of
  that row needs (a reclaim, a heartbeat, a settle), held until COMMIT. A reaper that comes
  after waits and then sees a fresh row; one that came first has changed the row, and the
  check fails. The lock is taken last so a long handler transaction does not block the
  worker's heartbeats for its whole length.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from sqlalchemy import Connection, Engine, func, literal, select, update

from dominus.db.errors import database_errors
from dominus.db.schema import Document, job_queue
from dominus.db.types import UTCDateTime
from dominus.errors import ClaimLostError
from dominus.jobs.model import Claim, Completed
from dominus.jobs.sql import metrics
from dominus.jobs.sql.predicates import fenced


def claim_holds(connection: Connection, claim: Claim, *, lock: bool) -> bool:
    """Whether the job row still carries `claim`; with `lock`, locked until the transaction
    ends (PostgreSQL; SQLite's write transaction already excludes every other writer)."""
    query = select(job_queue.c.id).where(fenced(claim))
    if lock and connection.dialect.name == "postgresql":
        query = query.with_for_update(key_share=True)  # FOR NO KEY UPDATE
    return connection.execute(query).first() is not None


def complete_fenced(connection: Connection, outcome: Completed, now: datetime) -> bool:
    """Complete the job inside the handler's transaction (River's JobCompleteTx), fenced like
    the worker's own completion, with its metrics. False when the claim no longer holds."""
    updated = connection.execute(
        update(job_queue)
        .where(fenced(outcome.claim))
        .values(
            status="completed",
            result=literal(outcome.result, Document),
            progress=func.coalesce(literal(outcome.progress, Document), job_queue.c.progress),
            finished_at=literal(now, UTCDateTime),
            updated_at=literal(now, UTCDateTime),
        )
    ).rowcount
    if updated != 1:
        return False
    metrics.write(
        connection,
        metrics.Increments().completions([outcome]),
        metrics.shard_for(outcome.claim.worker_id),
    )
    return True


class SqlFencedTransaction:
    """One open handler transaction: its connection and, once `complete` ran, the fact that the
    job was completed in it."""

    def __init__(self, connection: Connection, claim: Claim) -> None:
        self.connection = connection
        self.claim = claim
        self.completed = False

    def complete(self, outcome: Completed, now: datetime) -> None:
        if self.completed:
            raise RuntimeError(f"job {self.claim.job_id} was already completed in this transaction")
        if outcome.claim != self.claim:
            raise ValueError("the outcome is not this transaction's attempt")
        if not complete_fenced(self.connection, outcome, now):
            raise lost(self.claim)
        self.completed = True


def lost(claim: Claim) -> ClaimLostError:
    return ClaimLostError(
        f"job {claim.job_id}: attempt {claim.attempt} of worker {claim.worker_id} no longer "
        "holds its claim (the job was reclaimed); its transaction was rolled back"
    )


@contextmanager
def fenced_transaction(engine: Engine, claim: Claim) -> Iterator[SqlFencedTransaction]:
    """A write transaction that commits only while `claim` holds (see the module's docstring).
    Raises ClaimLostError, after rolling back, when it does not."""
    with database_errors(), engine.begin() as connection:
        if not claim_holds(connection, claim, lock=False):
            raise lost(claim)
        transaction = SqlFencedTransaction(connection, claim)
        yield transaction
        # A completion in this transaction was itself the fenced write (the row is no longer
        # `running`, so the check below would fail).
        if not transaction.completed and not claim_holds(connection, claim, lock=True):
            raise lost(claim)
