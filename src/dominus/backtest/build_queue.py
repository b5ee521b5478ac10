"""Enqueueing BACKTEST_BUILD after a sale, deduplicated while one is pending (ADR 0025).

Inside the transaction that records the sale:
  1. a pending BACKTEST_BUILD already exists → that one will read the sale; nothing is enqueued;
  2. otherwise enqueue with the dedupe key `backtest-build`. The engine's unique index (one active
     job per key) makes racing sales enqueue one job;
  3. if the key's holder is *running*, it may have read the outcomes before this sale: enqueue a
     follow-up keyed `backtest-build:after:<its id>`, deduplicated the same way, so every sale is
     read by a build that starts after it is recorded.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Connection, select

from dominus.jobs.client import JobQueue
from dominus.schema.tables import job_queue

BACKTEST_BUILD = "BACKTEST_BUILD"
WEIGHT_TUNE = "WEIGHT_TUNE"
BUILD_KEY = "backtest-build"


def pending_build(connection: Connection) -> int | None:
    return connection.execute(
        select(job_queue.c.id)
        .where(job_queue.c.job_type == BACKTEST_BUILD, job_queue.c.status == "pending")
        .order_by(job_queue.c.id)
        .limit(1)
    ).scalar_one_or_none()


def enqueue_build(connection: Connection, queue: JobQueue) -> tuple[int, bool]:
    """(job id, created) of the build that will read what this transaction records."""
    pending = pending_build(connection)
    if pending is not None:
        return pending, False
    result = queue.enqueue_job(BACKTEST_BUILD, {}, dedupe_key=BUILD_KEY, connection=connection)
    if result.created:
        return result.job_id, True
    status = connection.execute(
        select(job_queue.c.status).where(job_queue.c.id == result.job_id)
    ).scalar_one_or_none()
    if status != "running":
        return result.job_id, False
    follow_up = queue.enqueue_job(
        BACKTEST_BUILD,
        {},
        dedupe_key=f"{BUILD_KEY}:after:{result.job_id}",
        connection=connection,
    )
    return follow_up.job_id, follow_up.created


def build_enqueuer(queue: JobQueue) -> Callable[[Connection], tuple[int, bool]]:
    """What a transaction recording a sale calls: `outcomes add` and import, and the
    portfolio's ledger (`portfolio sold`, its API action) go through this one function."""

    def enqueue(connection: Connection) -> tuple[int, bool]:
        return enqueue_build(connection, queue)

    return enqueue
