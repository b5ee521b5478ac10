"""The DOMINUS job engine. It knows nothing of domains: handlers depend on it, never the reverse.

Public surface:

    JobQueue, EnqueueRequest        enqueue (also inside your own transaction), cancel, retry
    HandlerRegistry, JobType        job type → handler, payload model and defaults
    JobContext, AbortSignal         what a handler receives
    Snooze                          raised by a handler: run again later, no attempt spent
    Worker, WorkerConfig            the worker loop (`run()`, or `run_once(now)` in tests)
    SqlJobStore, JobStore           the store (contract and SQL implementation)
    RetryPolicy                     exponential backoff with jitter
    Job, JobStatus, ...             the model

Importing the package imports none of them: each loads on first use (`from dominus.jobs import
Worker`, `dominus.jobs.Worker`), so a command that reads the model and the store does not pay
for the worker, the queue client and their imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dominus.lazy_exports import exported_from

if TYPE_CHECKING:
    from dominus.jobs.abort import AbortReason, AbortSignal
    from dominus.jobs.client import EnqueueRequest, JobQueue
    from dominus.jobs.clock import DatabaseClock, utc_now
    from dominus.jobs.context import JobContext
    from dominus.jobs.limits import KeyLimiter, Limiters
    from dominus.jobs.model import (
        Claim,
        DeadLetteredJob,
        DeadLetterEntry,
        EnqueueResult,
        EventKind,
        Job,
        JobEvent,
        JobStatus,
        QueueStats,
        WorkerInfo,
    )
    from dominus.jobs.rate_limit import KeyState, RateLimit, RateLimited
    from dominus.jobs.registry import HandlerRegistry, JobType
    from dominus.jobs.retry import RetryPolicy
    from dominus.jobs.snooze import Snooze
    from dominus.jobs.sql import SqlJobStore
    from dominus.jobs.store import JobStore
    from dominus.jobs.worker import Worker
    from dominus.jobs.worker_config import WorkerConfig

# Each name is imported on first use (dominus.lazy_exports says why).
__getattr__ = exported_from(
    {
        "dominus.jobs.abort": ("AbortReason", "AbortSignal"),
        "dominus.jobs.client": ("EnqueueRequest", "JobQueue"),
        "dominus.jobs.clock": ("DatabaseClock", "utc_now"),
        "dominus.jobs.context": ("JobContext",),
        "dominus.jobs.limits": ("KeyLimiter", "Limiters"),
        "dominus.jobs.model": (
            "Claim",
            "DeadLetteredJob",
            "DeadLetterEntry",
            "EnqueueResult",
            "EventKind",
            "Job",
            "JobEvent",
            "JobStatus",
            "QueueStats",
            "RateLimit",
            "RateLimited",
            "WorkerInfo",
        ),
        "dominus.jobs.rate_limit": ("KeyState", "RateLimit", "RateLimited"),
        "dominus.jobs.registry": ("HandlerRegistry", "JobType"),
        "dominus.jobs.retry": ("RetryPolicy",),
        "dominus.jobs.snooze": ("Snooze",),
        "dominus.jobs.sql": ("SqlJobStore",),
        "dominus.jobs.store": ("JobStore",),
        "dominus.jobs.worker": ("Worker",),
        "dominus.jobs.worker_config": ("WorkerConfig",),
    }
)


__all__ = [
    "AbortReason",
    "AbortSignal",
    "Claim",
    "DatabaseClock",
    "DeadLetterEntry",
    "DeadLetteredJob",
    "EnqueueRequest",
    "EnqueueResult",
    "EventKind",
    "HandlerRegistry",
    "Job",
    "JobContext",
    "JobEvent",
    "JobQueue",
    "JobStatus",
    "JobStore",
    "JobType",
    "KeyLimiter",
    "KeyState",
    "Limiters",
    "QueueStats",
    "RateLimit",
    "RateLimited",
    "RetryPolicy",
    "Snooze",
    "SqlJobStore",
    "Worker",
    "WorkerConfig",
    "WorkerInfo",
    "utc_now",
]
