"""`SqlJobStore`: the store contract on SQLAlchemy Core, for SQLite and PostgreSQL.

Each public method is one transaction. Write transactions on SQLite start with BEGIN IMMEDIATE
(see `dominus.db.engine`); reads use a deferred transaction and never block a writer. Driver
errors leave as `DatabaseError` (or `DatabaseBusyError` when the database stayed locked), the
original kept as `__cause__`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine

from dominus.db.engine import read_only
from dominus.db.errors import database_errors
from dominus.jobs.activity import TypeActivity, Window
from dominus.jobs.liveness import LivenessLock
from dominus.jobs.metrics_model import MetricTotals
from dominus.jobs.model import (
    AttemptOutcome,
    Claim,
    ClaimFor,
    Completed,
    DeadLetterEntry,
    EnqueueResult,
    EventKind,
    Job,
    JobEvent,
    JobsAlike,
    JobStatus,
    NewJob,
    QueueState,
    QueueStats,
    ReclaimedJob,
    WorkerInfo,
    claim_requests,
)
from dominus.jobs.selection import BulkAction, BulkOutcome, JobSelection
from dominus.jobs.sql import (
    activity,
    admin,
    bulk,
    claiming,
    fencing,
    filters,
    history_fold,
    inserting,
    metrics,
    queues,
    settling,
)
from dominus.jobs.sql.backend import Backend, backend_for
from dominus.jobs.store import DatabaseWaitedError, RetryDelay

T = TypeVar("T")
# How often a process folds the counters into the hourly job history (ADR 0060).
HISTORY_FOLD_INTERVAL_SECONDS = 60.0


class SqlJobStore:
    """The job store on a SQLAlchemy engine (SQLite or PostgreSQL): the transitions written
    once, the statements that differ asked of the engine's `Backend`."""

    def __init__(self, engine: Engine, *, server_clock: bool | None = None) -> None:
        """`server_clock`: whether the claim's rate gate stamps its tokens with the database
        server's clock (None: the database's default; see `backend.stamps_with_server_clock`)."""
        self._engine = engine
        self._reader = read_only(engine)
        self._backend: Backend = backend_for(engine, server_clock=server_clock)
        self._history_fold_due = 0.0  # monotonic time of the next fold of the job history

    @property
    def engine(self) -> Engine:
        return self._engine

    @property
    def backend(self) -> str:
        return self._backend.name

    def _write(self, work: Callable[[Connection], T]) -> T:
        with database_errors(), self._engine.begin() as connection:
            return work(connection)

    def _read(self, work: Callable[[Connection], T]) -> T:
        with database_errors(), self._reader.begin() as connection:
            return work(connection)

    # --- callers -------------------------------------------------------------------------
    def enqueue(
        self,
        jobs: Sequence[NewJob],
        now: datetime,
        *,
        max_depth: int = 0,
        connection: Connection | None = None,
    ) -> list[EnqueueResult]:
        if not jobs:
            return []
        if connection is None and max_depth <= 0:  # the common case, on a driver connection
            if len(jobs) == 1:  # the hottest: one job, no generator to look at its key
                if jobs[0].dedupe_key is None:
                    return [EnqueueResult(self._backend.enqueue_plain(jobs, now)[0], True)]
            elif _without_dedupe_keys(jobs):
                return EnqueueResult.all_created(self._backend.enqueue_plain(jobs, now))
        if connection is not None:
            with database_errors():
                return inserting.insert_jobs(self._backend, connection, jobs, now, max_depth)
        return self._write(
            lambda conn: inserting.insert_jobs(self._backend, conn, jobs, now, max_depth)
        )

    def get_job(self, job_id: int) -> Job:
        return self._read(lambda conn: admin.get_job(conn, job_id))

    def list_jobs(
        self,
        *,
        status: JobStatus | None = None,
        job_type: str | None = None,
        limit: int = 50,
        before_id: int | None = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        with_payload_and_result: bool = True,
    ) -> list[Job]:
        selection = JobSelection(
            status=status,
            job_type=job_type,
            created_after=created_after,
            created_before=created_before,
        )
        return self.find_jobs(
            selection,
            None,
            limit=limit,
            before_id=before_id,
            with_payload_and_result=with_payload_and_result,
        )

    def find_jobs(
        self,
        selection: JobSelection,
        now: datetime | None,
        *,
        limit: int = 50,
        before_id: int | None = None,
        with_payload_and_result: bool = True,
    ) -> list[Job]:
        if filters.matches_nothing(selection):
            return []
        return self._read(
            lambda conn: admin.list_jobs(
                conn,
                selection,
                now,
                limit,
                before_id=before_id,
                with_payload_and_result=with_payload_and_result,
            )
        )

    def count_jobs(self, selection: JobSelection, now: datetime | None) -> int:
        if filters.matches_nothing(selection):
            return 0
        return self._read(lambda conn: filters.count_jobs(conn, selection, now))

    def select_job_ids(
        self, selection: JobSelection, now: datetime | None, limit: int
    ) -> list[int]:
        if filters.matches_nothing(selection):
            return []
        return self._read(lambda conn: filters.job_ids(conn, selection, now, limit))

    def job_states(self, ids: Sequence[int]) -> dict[int, JobStatus]:
        return self._read(lambda conn: bulk.job_states(conn, ids))

    def bulk(self, action: BulkAction, ids: Sequence[int], now: datetime) -> BulkOutcome:
        return self._write(lambda conn: bulk.apply(self._backend, conn, action, ids, now))

    def job_events(self, job_id: int) -> list[JobEvent]:
        return self._read(lambda conn: admin.job_events_of(conn, job_id))

    def request_cancel(self, job_id: int, now: datetime) -> Job:
        return self._write(lambda conn: admin.request_cancel(self._backend, conn, job_id, now))

    def retry_job(self, job_id: int, now: datetime) -> Job:
        return self._write(
            lambda conn: admin.restart_job(
                self._backend,
                conn,
                admin.get_job(conn, job_id, for_update=True),
                now,
                EventKind.RETRIED,
            )
        )

    # --- dead-letter queue ---------------------------------------------------------------
    def list_dead_letters(
        self,
        *,
        include_requeued: bool = False,
        limit: int = 100,
        job_type: str | None = None,
        failed_after: datetime | None = None,
        failed_before: datetime | None = None,
    ) -> list[DeadLetterEntry]:
        if job_type is not None and "\x00" in job_type:
            return []  # no entry has one, and PostgreSQL cannot compare it
        listed = admin.DeadLetterFilter(include_requeued, job_type, failed_after, failed_before)
        return self._read(lambda conn: admin.list_dead_letters(conn, listed, limit))

    def dead_letter_of_job(self, job_id: int) -> DeadLetterEntry | None:
        return self._read(lambda conn: admin.dead_letter_of_job(conn, job_id))

    def delete_dead_letters(self, entry_ids: Sequence[int]) -> int:
        return self._write(lambda conn: admin.delete_dead_letters(conn, entry_ids))

    def get_dead_letter(self, entry_id: int) -> DeadLetterEntry:
        return self._read(lambda conn: admin.get_dead_letter(conn, entry_id))

    def requeue_dead_letter(self, entry_id: int, now: datetime) -> Job:
        return self._write(
            lambda conn: admin.requeue_dead_letter(self._backend, conn, entry_id, now)
        )

    def purge_dead_letters(self, older_than: datetime | None = None) -> int:
        return self._write(lambda conn: admin.purge_dead_letters(conn, older_than))

    # --- workers -------------------------------------------------------------------------
    def register_worker(self, worker: WorkerInfo) -> None:
        self._write(lambda conn: admin.register_worker(conn, worker))

    def mark_worker_stopped(self, worker_id: str, now: datetime) -> None:
        self._write(lambda conn: admin.mark_worker_stopped(conn, worker_id, now))

    def list_workers(self, *, alive_since: datetime | None = None) -> list[WorkerInfo]:
        return self._read(lambda conn: admin.list_workers(conn, alive_since))

    def claim(
        self,
        worker_id: str,
        job_types: Sequence[str],
        limit: int,
        now: datetime,
        *,
        queues: Sequence[str] | None = None,
    ) -> list[Job]:
        return self._write(
            lambda conn: claiming.claim_jobs(
                self._backend, conn, worker_id, job_types, limit, now, queues
            )
        )

    def settle(
        self,
        outcomes: Sequence[AttemptOutcome],
        now: datetime,
        *,
        claim_for: ClaimFor | None = None,
    ) -> tuple[list[bool], list[Job]]:
        requests = claim_requests(claim_for)
        completed = [outcome for outcome in outcomes if isinstance(outcome, Completed)]
        if len(completed) == len(outcomes):
            # The common case, on the loop's own connection (ADR 0003, 0005).
            settled = self._backend.settle_completed(completed, now, requests)
            if settled is not None:
                accepted, claimed = settled
                return self._settle_unlanded(completed, accepted, now), claimed

        def work(connection: Connection) -> tuple[list[bool], list[Job]]:
            accepted = (
                settling.settle_outcomes(self._backend, connection, outcomes, now)
                if outcomes
                else []
            )
            return accepted, self._backend.claim_many(connection, requests, now)

        return self._write(work)

    def _settle_unlanded(
        self, outcomes: Sequence[Completed], accepted: list[bool], now: datetime
    ) -> list[bool]:
        unlanded = [outcome for outcome, ok in zip(outcomes, accepted, strict=True) if not ok]
        if not unlanded:
            return accepted
        earlier = set(self._write(lambda conn: settling.settle_unlanded(conn, unlanded, now)))
        return [ok or o.claim in earlier for o, ok in zip(outcomes, accepted, strict=True)]

    def heartbeat(
        self,
        worker_id: str,
        claims: Sequence[Claim],
        now: datetime,
        *,
        register_as: WorkerInfo | None = None,
    ) -> list[tuple[Claim, bool]]:
        return self._write(
            lambda conn: claiming.heartbeat(conn, worker_id, claims, now, register_as)
        )

    def release_unseen_claims(
        self, worker_id: str, known: Sequence[Claim], now: datetime
    ) -> list[int]:
        return self._write(
            lambda conn: claiming.release_unseen_claims(self._backend, conn, worker_id, known, now)
        )

    def cancel_requests(self, worker_id: str) -> list[Claim]:
        return self._read(lambda conn: claiming.cancel_requests(conn, worker_id))

    def record_progress(self, claim: Claim, progress: dict[str, Any], now: datetime) -> bool:
        return self._write(lambda conn: claiming.record_progress(conn, claim, progress, now))

    def fenced_transaction(
        self, claim: Claim
    ) -> AbstractContextManager[fencing.SqlFencedTransaction]:
        return fencing.fenced_transaction(self._backend, self._engine, claim)

    def reclaim_stale(
        self,
        now: datetime,
        max_running_age_seconds: float,
        retry_delay: RetryDelay,
        *,
        reach_by: float | None = None,
    ) -> list[ReclaimedJob]:
        if not self._read(lambda conn: claiming.any_stale(conn, now, max_running_age_seconds)):
            # One going stale after this look is the next pass's, as after the write's own.
            return []

        def reclaim(connection: Connection) -> list[ReclaimedJob]:
            # On SQLite the transaction began with BEGIN IMMEDIATE: the write lock is held
            # here, so the time now says how long another writer kept this pass waiting.
            reached_at = time.monotonic()
            if reach_by is not None and reached_at > reach_by:
                raise DatabaseWaitedError(reached_at)
            return claiming.reclaim_stale(
                self._backend, connection, now, max_running_age_seconds, retry_delay
            )

        return self._write(reclaim)

    def hold_liveness(self, worker_id: str) -> LivenessLock | None:
        return self._backend.liveness_lock(worker_id)

    def workers_found_dead(self, except_worker: str) -> set[str]:
        def look(connection: Connection) -> set[str]:
            owners = claiming.lock_owners(connection, except_worker)
            return self._backend.free_lock_owners(connection, owners) if owners else set()

        return self._read(look)

    def reclaim_from_dead(
        self, worker_ids: Sequence[str], now: datetime, retry_delay: RetryDelay
    ) -> list[ReclaimedJob]:
        reclaimed = self._write(
            lambda conn: claiming.reclaim_from_dead(
                self._backend, conn, worker_ids, now, retry_delay
            )
        )
        self._backend.forget_dead_workers(worker_ids)
        return reclaimed

    def metric_totals(self) -> MetricTotals:
        return self._read(lambda conn: metrics.read(conn, self._backend.uncounted_enqueues(conn)))

    def maintain(self) -> str | None:
        with database_errors():
            done = self._backend.maintain()
        if time.monotonic() >= self._history_fold_due:
            # Once a minute per process (ADR 0060): readings add what is not folded yet.
            self._history_fold_due = time.monotonic() + HISTORY_FOLD_INTERVAL_SECONDS
            self.fold_history(self._backend.clock()())
        return done

    def verify(self) -> None:
        self._backend.verify()

    def paused_queues(self) -> set[str]:
        return self._read(queues.paused_queues)

    def pause_queue(self, name: str, now: datetime) -> QueueState:
        return self._write(lambda conn: queues.set_paused(self._backend, conn, name, True, now))

    def resume_queue(self, name: str, now: datetime) -> QueueState:
        return self._write(lambda conn: queues.set_paused(self._backend, conn, name, False, now))

    def list_queues(self) -> list[QueueState]:
        return self._read(queues.queue_states)

    def activity(self, window: Window, now: datetime) -> dict[str, TypeActivity]:
        return self._read(lambda conn: activity.activity(conn, window, now))

    def fold_history(self, now: datetime) -> int:
        if not self._read(history_fold.needs_fold):
            return 0
        return self._write(lambda conn: history_fold.fold(self._backend, conn, now))

    def queue_stats(self, now: datetime, *, alive_since: datetime) -> QueueStats:
        return self._read(lambda conn: admin.queue_stats(conn, now, alive_since))


def _without_dedupe_keys(jobs: Sequence[NewJob]) -> bool:
    """Whether no job of `jobs` has a dedupe key (jobs alike share the template's, so their
    jobs are not built to find out)."""
    if isinstance(jobs, JobsAlike):
        return jobs.template.dedupe_key is None
    return all(job.dedupe_key is None for job in jobs)
