"""The store contract: every operation the engine needs from a backend, one method per
transition (in the manner of Oban's engine callbacks and River's driver interface).

`tests/contract/` exercises this contract only, so each backend proves the same guarantees.
Methods that depend on time take `now` (timezone-aware UTC); nothing here reads the clock.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import Connection

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
    Job,
    JobEvent,
    JobStatus,
    NewJob,
    QueueState,
    QueueStats,
    ReclaimedJob,
    WorkerInfo,
)
from dominus.jobs.selection import BulkAction, BulkOutcome, JobSelection

# (job_type, attempt number that failed) -> seconds to wait before the next attempt
RetryDelay = Callable[[str, int], float]


class DatabaseWaitedError(Exception):
    """A reclaim pass reached the database only after its deadline (`reach_by`): it judged
    nothing. `reached_at` is the `time.monotonic()` reading when it did."""

    def __init__(self, reached_at: float) -> None:
        super().__init__("the database answered the reclaim pass too late to judge silence")
        self.reached_at = reached_at


class FencedTransaction(Protocol):
    """A handler's write transaction, open on `connection`, that commits only while its
    attempt still holds the claim (ADR 0024)."""

    @property
    def connection(self) -> Connection: ...

    @property
    def completed(self) -> bool:
        """Whether `complete` ran in this transaction."""
        ...

    def complete(self, outcome: Completed, now: datetime) -> None:
        """Complete the job in this transaction (fenced). Raises ClaimLostError."""
        ...


class JobStore(Protocol):
    """Durable job state. Implementations: `dominus.jobs.sql.SqlJobStore`."""

    @property
    def backend(self) -> str:
        """'sqlite' or 'postgresql'."""
        ...

    # --- callers -------------------------------------------------------------------------
    def enqueue(
        self,
        jobs: Sequence[NewJob],
        now: datetime,
        *,
        max_depth: int = 0,
        connection: Connection | None = None,
    ) -> list[EnqueueResult]:
        """Insert `jobs` atomically (all or none). A job whose dedupe key is held by an active
        (pending/running) job yields that job's id with created=False. Raises QueueFullError when
        max_depth > 0 and the active jobs would exceed it. With `connection`, runs inside the
        caller's transaction (transactional enqueue) and leaves commit to the caller."""
        ...

    def get_job(self, job_id: int) -> Job:
        """Raises JobNotFoundError."""
        ...

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
        """Newest first (by id); `before_id` pages towards older jobs. Without payload and
        result, those two are not read (the jobs carry `{}` and None): a page of summaries stays
        small whatever the jobs hold."""
        ...

    def find_jobs(
        self,
        selection: JobSelection,
        now: datetime | None,
        *,
        limit: int = 50,
        before_id: int | None = None,
        with_payload_and_result: bool = True,
    ) -> list[Job]:
        """As `list_jobs`, for any `JobSelection`; `now` judges its `waiting` view."""
        ...

    def count_jobs(self, selection: JobSelection, now: datetime | None) -> int: ...

    def select_job_ids(
        self, selection: JobSelection, now: datetime | None, limit: int
    ) -> list[int]:
        """The ids of the selection's first `limit` jobs, oldest first."""
        ...

    def job_states(self, ids: Sequence[int]) -> dict[int, JobStatus]:
        """The state of each of `ids` that names a job."""
        ...

    def bulk(self, action: BulkAction, ids: Sequence[int], now: datetime) -> BulkOutcome:
        """`action` on each of `ids`, in one transaction, as its one-job form does it (cancel
        as `request_cancel`, retry as `retry_job`; delete takes any job but a running one).
        Jobs it does not take are skipped with the reason."""
        ...

    def job_events(self, job_id: int) -> list[JobEvent]:
        """Oldest first."""
        ...

    def request_cancel(self, job_id: int, now: datetime) -> Job:
        """pending → cancelled at once; running → cancel_requested_at set (the owning worker
        aborts it). Raises InvalidTransitionError for finished jobs, JobNotFoundError."""
        ...

    def retry_job(self, job_id: int, now: datetime) -> Job:
        """failed | cancelled → pending with attempts reset (same id)."""
        ...

    # --- dead-letter queue ---------------------------------------------------------------
    def list_dead_letters(
        self,
        *,
        include_requeued: bool = False,
        limit: int = 100,
        job_type: str | None = None,
        failed_after: datetime | None = None,
        failed_before: datetime | None = None,
    ) -> list[DeadLetterEntry]: ...

    def dead_letter_of_job(self, job_id: int) -> DeadLetterEntry | None:
        """The job's latest dead-letter entry, if it has one."""
        ...

    def delete_dead_letters(self, entry_ids: Sequence[int]) -> int:
        """Delete these entries (their jobs stay failed). Returns how many."""
        ...

    def get_dead_letter(self, entry_id: int) -> DeadLetterEntry: ...

    def requeue_dead_letter(self, entry_id: int, now: datetime) -> Job:
        """The entry's job (same id) → pending with attempts reset; entry.requeued_at = now."""
        ...

    def purge_dead_letters(self, older_than: datetime | None = None) -> int:
        """Delete entries (failed before `older_than`, if given). Returns how many."""
        ...

    # --- workers -------------------------------------------------------------------------
    def register_worker(self, worker: WorkerInfo) -> None: ...

    def mark_worker_stopped(self, worker_id: str, now: datetime) -> None: ...

    def list_workers(self, *, alive_since: datetime | None = None) -> list[WorkerInfo]: ...

    def claim(
        self,
        worker_id: str,
        job_types: Sequence[str],
        limit: int,
        now: datetime,
        *,
        queues: Sequence[str] | None = None,
    ) -> list[Job]:
        """pending & due → running for up to `limit` jobs of `job_types` from `queues` (None:
        every queue), highest priority first, then oldest run_at, in one statement. A paused
        queue's jobs are never claimed. Never hands the same attempt to two workers."""
        ...

    def settle(
        self,
        outcomes: Sequence[AttemptOutcome],
        now: datetime,
        *,
        claim_for: ClaimFor | None = None,
    ) -> tuple[list[bool], list[Job]]:
        """Record finished attempts (fenced on their claims) and, in the same transaction,
        claim for `claim_for`: a `ClaimRequest`, several (each its own limit and queues), or
        `(worker_id, job_types, limit)` from every queue. Returns whether each
        outcome was accepted (False: the claim was lost) and the newly claimed jobs."""
        ...

    def heartbeat(
        self,
        worker_id: str,
        claims: Sequence[Claim],
        now: datetime,
        *,
        register_as: WorkerInfo | None = None,
    ) -> list[tuple[Claim, bool]]:
        """Refresh heartbeat_at of the jobs behind `claims` (the attempts this worker is running)
        and the worker's last_seen_at. Returns the claims that still hold, each with whether a
        cancel was requested. Only the given claims are refreshed: a row locked by this worker
        that it no longer runs (its completion was lost in a database crash) goes stale and is
        reclaimed, instead of being kept alive forever. When the worker has no row (a database
        restored under it), `register_as` is written as its row again."""
        ...

    def release_unseen_claims(
        self, worker_id: str, known: Sequence[Claim], now: datetime
    ) -> list[int]:
        """Return to pending, without spending the attempt, the running jobs locked by
        `worker_id` other than `known`: a `settle` that raised may still have committed its
        claims on the server, and the worker never saw them. Returns their ids."""
        ...

    def cancel_requests(self, worker_id: str) -> list[Claim]:
        """Running jobs of this worker with a pending cancel request."""
        ...

    def record_progress(self, claim: Claim, progress: dict[str, Any], now: datetime) -> bool:
        """Store progress if the claim still holds. Returns False if it does not."""
        ...

    def fenced_transaction(self, claim: Claim) -> AbstractContextManager[FencedTransaction]:
        """A write transaction for a handler's own rows that verifies, in the same transaction,
        that `claim` still holds: when it starts, and holding the job row's lock just before
        it commits. Raises ClaimLostError (after rolling back) when the claim was lost."""
        ...

    def reclaim_stale(
        self,
        now: datetime,
        max_running_age_seconds: float,
        retry_delay: RetryDelay,
        *,
        reach_by: float | None = None,
    ) -> list[ReclaimedJob]:
        """Running jobs whose heartbeat is older than the max age → pending (not before the
        retry delay), or → failed + dead-letter entry when that was their last attempt.

        `reach_by` (a `time.monotonic()` reading): when the transaction could only begin after
        it (SQLite's write lock was held by another process, say), nothing is judged and
        `DatabaseWaitedError` is raised: every other worker waited for the same database, so
        their silence is no evidence yet."""
        ...

    def hold_liveness(self, worker_id: str) -> LivenessLock | None:
        """The lock whose release tells other workers that `worker_id` died (not yet taken),
        or None when the database offers none."""
        ...

    def workers_found_dead(self, except_worker: str) -> set[str]:
        """Workers (other than `except_worker`) holding running jobs whose liveness lock is
        free now."""
        ...

    def reclaim_from_dead(
        self, worker_ids: Sequence[str], now: datetime, retry_delay: RetryDelay
    ) -> list[ReclaimedJob]:
        """The running jobs of workers known dead → pending (not before the retry delay), or →
        failed + dead-letter entry when that was their last attempt; fenced on each claim."""
        ...

    # --- named queues (ADR 0050) -------------------------------------------------------------
    def paused_queues(self) -> set[str]:
        """The names of the queues paused now."""
        ...

    def pause_queue(self, name: str, now: datetime) -> QueueState:
        """From its commit on, no claim on any host takes `name`'s jobs; running ones finish.
        Idempotent."""
        ...

    def resume_queue(self, name: str, now: datetime) -> QueueState:
        """Claims take `name`'s jobs again (idle workers are woken). Idempotent."""
        ...

    def list_queues(self) -> list[QueueState]:
        """Every queue with active jobs or a pause state, and `default`, by name."""
        ...

    def activity(self, window: Window, now: datetime) -> dict[str, TypeActivity]:
        """Per job type and interval of `window` (whole UTC hours): jobs completed (and their
        run time), attempts failed and jobs dead-lettered, from the hourly history folded from
        the counters (kept HISTORY_KEPT, whatever becomes of the job rows); what is not folded
        yet counts in the hour of `now`."""
        ...

    def fold_history(self, now: datetime) -> int:
        """Add what the counters gained since the last fold to the history's hour of `now`
        (the first fold takes the kept job rows' history). `maintain` calls it once a minute.
        How many counters moved."""
        ...

    def queue_stats(self, now: datetime, *, alive_since: datetime) -> QueueStats: ...

    def metric_totals(self) -> MetricTotals:
        """The monotonic counters and duration histograms, summed over their shards."""
        ...

    def maintain(self) -> str | None:
        """Housekeeping the backend needs (workers call it now and then, off their loop).
        Returns what it did, or None."""
        ...

    def verify(self) -> None:
        """Raise DatabaseGoneError when the database this store writes to is no longer the one
        it opened (a SQLite file deleted or replaced): whatever it writes from then on is lost.
        Cheap; workers call it every second or so, off their loop."""
        ...
