"""Which jobs an operator means: a listing's filter (`JobSelection`), why a pending job waits
(`Waiting`), and the actions taken on many jobs at once (`BulkAction`, ADR 0054)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from dominus.jobs.model import JobStatus

# The most jobs one bulk request acts on: one write transaction, which on SQLite holds the
# database's only write lock while it runs (ADR 0054 has the timings).
BULK_CAP = 1000
SEARCH_MAX_LENGTH = 200


class Waiting(StrEnum):
    """Why a pending job has not run yet (Sidekiq's and Oban's views of the pending set).

    - due: its run_at has come; it waits only for a worker;
    - scheduled: its run_at is ahead and no attempt of it has failed (enqueued ahead, or
      snoozed before its first attempt);
    - retrying: its run_at is ahead and an attempt of this round failed: it waits out the
      retry backoff. A failed attempt is what leaves `attempts` above 0 on a pending job
      (a snooze or a shutdown release hands its attempt back).
    """

    DUE = "due"
    SCHEDULED = "scheduled"
    RETRYING = "retrying"


def waiting_of(status: JobStatus, attempts: int, run_at: datetime, now: datetime) -> Waiting | None:
    if status is not JobStatus.PENDING:
        return None
    if run_at <= now:
        return Waiting.DUE
    return Waiting.RETRYING if attempts > 0 else Waiting.SCHEDULED


class BulkAction(StrEnum):
    RETRY = "retry"
    CANCEL = "cancel"
    DELETE = "delete"

    @property
    def applies_to(self) -> tuple[JobStatus, ...]:
        """The states a job must be in for the action to take it."""
        return _APPLIES_TO[self]

    @property
    def past_tense(self) -> str:
        return {"retry": "retried", "cancel": "cancelled", "delete": "deleted"}[self.value]


_APPLIES_TO = {
    BulkAction.RETRY: (JobStatus.FAILED, JobStatus.CANCELLED),
    BulkAction.CANCEL: (JobStatus.PENDING, JobStatus.RUNNING),
    # A running job is owned by its worker, which would write to a row that is gone: it is
    # cancelled, never deleted.
    BulkAction.DELETE: (
        JobStatus.PENDING,
        JobStatus.COMPLETED,
        JobStatus.FAILED,
        JobStatus.CANCELLED,
    ),
}


def not_applicable(action: BulkAction, job_id: int, status: JobStatus) -> str:
    """Why `action` does not take job `job_id`, in `status`."""
    if action is BulkAction.DELETE and status is JobStatus.RUNNING:
        return f"job {job_id} is running and cannot be deleted: cancel it instead"
    allowed = " or ".join(state.value for state in action.applies_to)
    return f"job {job_id} is {status.value}; only {allowed} jobs can be {action.past_tense}"


@dataclass(frozen=True)
class JobSelection:
    """A listing's filter; every field narrows it, None leaves it open. `waiting` implies
    pending, and needs the time it is judged at (`as_of`)."""

    status: JobStatus | None = None
    job_type: str | None = None
    waiting: Waiting | None = None
    search: str | None = None  # a substring of the payload's JSON or of the last error
    created_after: datetime | None = None
    created_before: datetime | None = None
    statuses: tuple[JobStatus, ...] = ()  # only jobs in these states (empty: any)

    def only(self, statuses: tuple[JobStatus, ...]) -> JobSelection:
        return JobSelection(
            self.status,
            self.job_type,
            self.waiting,
            self.search,
            self.created_after,
            self.created_before,
            statuses,
        )


@dataclass(frozen=True)
class BulkOutcome:
    """What a bulk action did: the jobs it changed, and each job it left with the reason."""

    action: BulkAction
    done: list[int] = field(default_factory=list)
    skipped: dict[int, str] = field(default_factory=dict)
