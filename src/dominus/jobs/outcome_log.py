"""What a worker says about an attempt once the store has recorded (or refused) its outcome: one
log line per ending, at the level an operator would want to see it."""

from __future__ import annotations

import logging
from datetime import datetime

from dominus.jobs.model import AttemptOutcome, Job, OutcomeKind

log = logging.getLogger("dominus.worker")


def scheduled_retry(job: Job, outcome: AttemptOutcome) -> datetime | None:
    """When the job runs again after this (accepted) outcome, or None if it does not retry."""
    if outcome.kind is not OutcomeKind.FAILED or dead_lettered(job, outcome):
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
    attempt = f"attempt {job.attempts}/{job.max_attempts}"
    if outcome.kind is OutcomeKind.COMPLETED:
        log.info("job %d %s completed (%s)", job.id, job.job_type, attempt)
    elif outcome.kind is OutcomeKind.FAILED:
        _log_failure(job, outcome, attempt)
    elif outcome.kind is OutcomeKind.CANCELLED:
        log.info("job %d %s cancelled (%s)", job.id, job.job_type, attempt)
    else:
        verb = "returned to pending" if outcome.requeue else "cancelled"
        log.info("job %d %s interrupted by shutdown: %s", job.id, job.job_type, verb)


def _log_failure(job: Job, outcome: AttemptOutcome, attempt: str) -> None:
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
    assert outcome.retry_at is not None
    log.warning(
        "job %d %s failed (%s): %s; retry not before %s",
        job.id,
        job.job_type,
        attempt,
        outcome.error,
        outcome.retry_at.isoformat(timespec="milliseconds"),
    )


def dead_lettered(job: Job, outcome: AttemptOutcome) -> bool:
    """Whether this (accepted) failure ended the job in the dead-letter queue."""
    return job.attempts >= job.max_attempts or outcome.permanent
