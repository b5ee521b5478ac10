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

from sqlalchemy import Connection, Engine, select

from dominus.db.errors import database_errors
from dominus.errors import ClaimLostError
from dominus.jobs.model import Claim, Completed
from dominus.jobs.sql.backend import Backend
from dominus.jobs.sql.predicates import fenced
from dominus.jobs.sql.tables import job_queue


def claim_holds(backend: Backend, connection: Connection, claim: Claim, *, lock: bool) -> bool:
    """Whether the job row still carries `claim`; with `lock`, the row locked against every
    other writer until the transaction ends."""
    query = select(job_queue.c.id).where(fenced(claim))
    if lock:
        query = backend.lock_row(query)
    return connection.execute(query).first() is not None


class SqlFencedTransaction:
    """One open handler transaction: its connection and, once `complete` ran, the fact that the
    job was completed in it."""

    def __init__(self, backend: Backend, connection: Connection, claim: Claim) -> None:
        self._backend = backend
        self.connection = connection
        self.claim = claim
        self.completed = False

    def complete(self, outcome: Completed, now: datetime) -> None:
        if self.completed:
            raise RuntimeError(f"job {self.claim.job_id} was already completed in this transaction")
        if outcome.claim != self.claim:
            raise ValueError("the outcome is not this transaction's attempt")
        # The worker's own batch completion, fenced and counted the same way (River's
        # JobCompleteTx): the job is completed exactly when the handler's writes commit.
        (landed,) = self._backend.complete(self.connection, [outcome], now)
        if not landed:
            raise lost(self.claim)
        self.completed = True


def lost(claim: Claim) -> ClaimLostError:
    return ClaimLostError(
        f"job {claim.job_id}: attempt {claim.attempt} of worker {claim.worker_id} no longer "
        "holds its claim (the job was reclaimed); its transaction was rolled back"
    )


@contextmanager
def fenced_transaction(
    backend: Backend, engine: Engine, claim: Claim
) -> Iterator[SqlFencedTransaction]:
    """A write transaction that commits only while `claim` holds (see the module's docstring).
    Raises ClaimLostError, after rolling back, when it does not."""
    with database_errors(), engine.begin() as connection:
        if not claim_holds(backend, connection, claim, lock=False):
            raise lost(claim)
        transaction = SqlFencedTransaction(backend, connection, claim)
        yield transaction
        # A completion in this transaction was itself the fenced write (the row is no longer
        # `running`, so the check below would fail).
        if not transaction.completed and not claim_holds(backend, connection, claim, lock=True):
            raise lost(claim)
