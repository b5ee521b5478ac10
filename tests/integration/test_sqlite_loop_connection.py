"""The worker loop's SQLite connection is its thread's alone, taken out of the pool: after the
loop has settled on it, every pooled connection still refuses a status the CHECK does not
allow, as the loop's own does (ADR 0065)."""

from __future__ import annotations

import gc
import threading
from contextlib import ExitStack

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import IntegrityError

from dominus.jobs import JobStatus
from dominus.jobs.model import Completed
from dominus.jobs.sql.store import SqlJobStore
from tests.support.clock import T0
from tests.support.jobs import claimed_job, new_job

pytestmark = pytest.mark.backends("sqlite")

# More connections than a test ever opened before: the loop's, were it pooled, among them.
POOLED = 5


def settle_on_a_thread_of_its_own(store: SqlJobStore) -> int:
    job = claimed_job(store)
    store.enqueue([new_job()], T0)

    def loop() -> None:
        store.settle([Completed(job.claim)], T0, claim_for=("w1", ["diag.noop"], 5))

    thread = threading.Thread(target=loop)
    thread.start()
    thread.join()
    gc.collect()  # the thread's connection gone with it
    assert store.get_job(job.id).status is JobStatus.COMPLETED
    return job.id


def test_every_pooled_connection_still_checks_the_status(
    engine: Engine, store: SqlJobStore
) -> None:
    job_id = settle_on_a_thread_of_its_own(store)
    with ExitStack() as stack:
        for _ in range(POOLED):
            connection = stack.enter_context(engine.connect())
            with pytest.raises(IntegrityError):
                connection.execute(
                    text("UPDATE job_queue SET status = 'bogus' WHERE id = :id"), {"id": job_id}
                )
            connection.rollback()
