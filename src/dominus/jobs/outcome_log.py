"""What a worker says about an attempt once the store has recorded (or refused) its outcome: one
log line per ending, at the level an operator would want to see it."""

from __future__ import annotations

import logging
from datetime import datetime

from dominus.jobs.model import (
    AttemptOutcome,
    Cancelled,
    Completed,
    Failed,
    Interrupted,
    Job,
    Returned,
    Snoozed,
)

log = logging.getLogger("dominus.worker")


def scheduled_retry(job: Job, outcome: AttemptOutcome) -> datetime | None:
    """When the job runs again after this (accepted) outcome, or None if it does not retry."""
    if not isinstance(outcome, Failed) or dead_lettered(job, outcome):
        return None
    return outcome.retry_at


def log_settled(job: Job, outcome: AttemptOutcome, accepted: bool) -> None:
    if not accepted:
        log.warning(
            "job %d %s: attempt %d finished after its claim was lost; outcome dropped",
            job.id,
            job.job_type,
            job.attempts,
        )
        return
    if isinstance(outcome, Completed):  # once per job on the hot path: no text made up front
        if not log.isEnabledFor(logging.INFO):
            return
        log.info(
            "job %d %s completed (attempt %d/%d)",
            job.id,
            job.job_type,
            job.attempts,
            job.max_attempts,
        )
        return
    attempt = f"attempt {job.attempts}/{job.max_attempts}"
    match outcome:
        case Failed():
            _log_failure(job, outcome, attempt)
        case Cancelled():
            log.info("job %d %s cancelled (%s)", job.id, job.job_type, attempt)
        case Interrupted():
            verb = "returned to pending" if outcome.requeue else "cancelled"
            log.info("job %d %s interrupted by shutdown: %s", job.id, job.job_type, verb)
        case Returned():
            log.info("job %d %s %s", job.id, job.job_type, outcome.why)
        case Snoozed():
            log.info(
                "job %d %s snoozed for %g s (%s not counted)",
                job.id,
                job.job_type,
                outcome.seconds,
                attempt,
            )


def _log_failure(job: Job, outcome: Failed, attempt: str) -> None:
    if dead_lettered(job, outcome):
        log.error(
            "job %d %s failed (%s): %s; %sdead-lettered",
            job.id,
            job.job_type,
            attempt,
            outcome.error,
            "permanent, not retried; " if outcome.permanent else "",
        )
        return
    retry_at = outcome.retry_at
    log.warning(
        "job %d %s failed (%s): %s; retry not before %s",
        job.id,
        job.job_type,
        attempt,
        outcome.error,
        "now" if retry_at is None else retry_at.isoformat(timespec="milliseconds"),
    )


def dead_lettered(job: Job, outcome: Failed) -> bool:
    """Whether this (accepted) failure ended the job in the dead-letter queue."""
    return job.attempts >= job.max_attempts or outcome.permanent
