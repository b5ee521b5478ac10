"""Dead-lettered jobs notify: the engine's `on_dead_letter` hook (it knows nothing of notifiers)
turned into a notification by the domain side, which builds the worker."""

from __future__ import annotations

from collections.abc import Callable

from dominus.jobs.model import DeadLetteredJob
from dominus.notify.model import Notification, Notifier, Severity

EVENT = "job.dead_lettered"


def dead_letter_notification(job: DeadLetteredJob) -> Notification:
    if job.reclaimed:
        why = "its worker went silent on the last attempt"
    elif job.permanent:
        why = "a permanent error (not retried)"
    else:
        why = f"attempts exhausted ({job.attempts} of {job.max_attempts})"
    return Notification(
        event=EVENT,
        severity=Severity.CRITICAL,
        subject=f"job {job.job_id} {job.job_type} dead-lettered: {why}; last error: {job.error}",
        at=job.at,
        details={
            "job_id": job.job_id,
            "job_type": job.job_type,
            "attempts": job.attempts,
            "max_attempts": job.max_attempts,
            "error": job.error,
            "permanent": job.permanent,
            "reclaimed": job.reclaimed,
            "inspect": f"dominus jobs show {job.job_id}",
        },
    )


def dead_letter_hook(notifier: Notifier) -> Callable[[DeadLetteredJob], None]:
    """The worker's `on_dead_letter`: one notification per dead-lettered job."""

    def notify(job: DeadLetteredJob) -> None:
        notifier.send(dead_letter_notification(job))

    return notify
