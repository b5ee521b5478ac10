"""How a worker is set up (`WorkerConfig`) and what one tick of its loop reports."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dominus.jobs.queues import EVERY_QUEUE, QueueShares
from dominus.jobs.rate_limit import RateLimit
from dominus.jobs.retry import RetryPolicy


@dataclass(frozen=True)
class WorkerConfig:
    concurrency: int = 2
    poll_interval_seconds: float = 5.0
    max_running_age_seconds: float = 300.0
    heartbeat_interval_seconds: float = 15.0
    graceful_shutdown_timeout_seconds: float = 30.0
    shutdown_requeue: bool = False
    retry_policy: RetryPolicy = field(default_factory=RetryPolicy)
    # How often running jobs are checked for cancel requests (cancel latency).
    cancel_check_interval_seconds: float = 0.5
    # How often the change watcher is read while the worker has free slots (pickup latency).
    change_check_interval_seconds: float = 0.005
    # After aborting at shutdown, how long handlers get to stop before their jobs are recorded.
    abort_grace_seconds: float = 5.0
    progress_interval_seconds: float = 1.0
    # How often a worker asks the backend whether it needs housekeeping (`JobStore.maintain`;
    # a cheap statistics query unless there is work to do).
    maintenance_interval_seconds: float = 5.0
    burst: bool = False
    # Claiming ahead of free slots (ADR 0033): at most this many jobs beyond the handler threads,
    # and only about `prefetch_window_seconds` of work at the handlers' recent run times. Sync
    # handlers only: a worker with `async def` job types does not claim ahead. 0 turns it off.
    max_prefetch: int = 0
    prefetch_window_seconds: float = 0.02
    # A job claimed ahead that waits longer than this goes back to pending for another worker.
    prefetch_max_wait_seconds: float = 1.0
    # While prefetched jobs wait, the loop records finished ones at least this often.
    settle_flush_seconds: float = 0.02
    # Dead workers (their liveness lock free, `dominus.jobs.liveness`): how often the locks of
    # the workers holding running jobs are looked at, how long one must stay free to count as
    # dead, and how long after database trouble the looks count for nothing.
    dead_worker_check_interval_seconds: float = 0.5
    dead_worker_confirm_seconds: float = 1.5
    dead_worker_settle_seconds: float = 5.0
    # The queues this worker takes, and each one's share of its concurrency (ADR 0050).
    queues: QueueShares = EVERY_QUEUE
    # Rate limits (key → limit) the worker configures when it starts (RATE_LIMITS, ADR 0053).
    rate_limits: Mapping[str, RateLimit] = field(default_factory=dict)
    # The garbage collector's youngest-generation threshold while the worker runs (None: the
    # interpreter's as it is); see dominus.jobs.collector.
    gc_threshold: int | None = 10_000

    def __post_init__(self) -> None:
        self.queues.check(self.concurrency)

    @property
    def reclaim_interval_seconds(self) -> float:
        return max(self.heartbeat_interval_seconds, self.max_running_age_seconds / 10)


@dataclass(frozen=True)
class TickReport:
    claimed: int = 0
    settled: int = 0
    failed: bool = False
