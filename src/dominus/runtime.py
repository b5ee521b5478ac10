"""What a process needs, built once at its edge from the settings: engine, store, registry,
clock, change watcher, worker configuration. The CLI and the HTTP API both start here.

Building a runtime imports the store and nothing above it: the handlers (and through them the
pipeline, the providers, httpx, numpy), the notifiers and the scheduler are imported by the
methods that build them, so `dominus jobs list` reads its rows without loading them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from sqlalchemy import Engine

from dominus.config import Settings
from dominus.db.engine import SqliteMode, create_database_engine
from dominus.jobs.clock import Clock
from dominus.jobs.concurrency import parse_concurrency_limits
from dominus.jobs.limits import Limiters
from dominus.jobs.queues import EVERY_QUEUE, QueueShares
from dominus.jobs.rate_limit import parse_rate_limits
from dominus.jobs.retry import RetryPolicy
from dominus.jobs.sql import SqlJobStore
from dominus.jobs.sql.backend import Backend, backend_for
from dominus.jobs.sql.limits import RateLimitStore
from dominus.jobs.wakeup import ChangeWatcher
from dominus.jobs.worker_config import WorkerConfig
from dominus.schema.migrate import ensure_migrated

if TYPE_CHECKING:
    from dominus.jobs.client import JobQueue
    from dominus.jobs.registry import HandlerRegistry
    from dominus.jobs.worker import DeadLetterHook
    from dominus.notify import Notifier
    from dominus.providers.rate_gate import RateGate
    from dominus.scheduling.service import ScheduleService


@dataclass
class Runtime:
    settings: Settings
    engine: Engine

    @cached_property
    def store(self) -> SqlJobStore:
        return SqlJobStore(self.engine)

    def registry(self, *, diagnostic_jobs: bool = False) -> HandlerRegistry:
        from dominus.handlers import HandlerDependencies, build_registry  # noqa: PLC0415

        return build_registry(
            diagnostic_jobs=diagnostic_jobs or self.settings.DOMINUS_DIAGNOSTIC_JOBS,
            dependencies=HandlerDependencies(
                self.settings, self.engine, self.clock, self.notifier, self.rate_gate
            ),
        )

    @cached_property
    def rate_gate(self) -> RateGate:
        """The gate for RDAP and WHOIS requests, shared through the database by every process
        on it (`dominus.providers.shared_gate`), this process's own when the database fails."""
        from dominus.providers.setup import rate_gate  # noqa: PLC0415
        from dominus.providers.shared_gate import SharedRateGate  # noqa: PLC0415

        local = rate_gate(self.settings)
        return SharedRateGate(self.limiters, local.limits, local)

    @cached_property
    def notifier(self) -> Notifier:
        """The log, plus the webhook when NOTIFY_WEBHOOK_URL is set (ADR 0022)."""
        from dominus.notify import notifier_from_settings  # noqa: PLC0415

        return notifier_from_settings(self.settings)

    def dead_letter_hook(self) -> DeadLetterHook:
        """A worker's `on_dead_letter`: dead-lettered jobs notify."""
        from dominus.notify.dead_letters import dead_letter_hook  # noqa: PLC0415

        return dead_letter_hook(self.notifier)

    @cached_property
    def backend(self) -> Backend:
        """The engine's database backend (see `dominus.jobs.sql.backend`)."""
        return backend_for(self.engine)

    @cached_property
    def clock(self) -> Clock:
        """The one clock of this database (see `dominus.jobs.clock`)."""
        return self.backend.clock()

    @cached_property
    def limiters(self) -> Limiters:
        """The rate limiters and pauses every process shares (ADR 0053)."""
        return Limiters(RateLimitStore(self.engine), self.clock)

    def queue(self, registry: HandlerRegistry | None = None) -> JobQueue:
        from dominus.jobs.client import JobQueue  # noqa: PLC0415

        return JobQueue(
            self.store,
            registry or self.registry(),
            max_depth=self.settings.JOB_QUEUE_MAX_DEPTH,
            clock=self.clock,
            concurrency_limits=parse_concurrency_limits(self.settings.CONCURRENCY_LIMITS),
        )

    def schedule_service(self, *, diagnostic_jobs: bool = False) -> ScheduleService:
        from dominus.scheduling.service import ScheduleService  # noqa: PLC0415

        diagnostic = diagnostic_jobs or self.settings.DOMINUS_DIAGNOSTIC_JOBS
        return ScheduleService(
            self.settings,
            engine=self.engine,
            registry=self.registry(diagnostic_jobs=diagnostic),
            queue=self.queue,
            clock=self.clock,
            heartbeat_interval_seconds=self.settings.JOB_HEARTBEAT_INTERVAL_MS / 1000,
            diagnostic_jobs=diagnostic,
        )

    def change_watcher(self) -> ChangeWatcher:
        return self.backend.change_watcher()

    @property
    def max_prefetch(self) -> int:
        """`WORKER_MAX_PREFETCH`, or the database backend's cap when it is unset."""
        chosen = self.settings.WORKER_MAX_PREFETCH
        return self.backend.default_max_prefetch if chosen is None else chosen

    def worker_config(
        self,
        concurrency: int | None = None,
        poll_interval_ms: int | None = None,
        *,
        burst: bool = False,
        queues: QueueShares = EVERY_QUEUE,
    ) -> WorkerConfig:
        settings = self.settings
        poll_ms = poll_interval_ms or settings.JOB_QUEUE_POLL_INTERVAL_MS
        return WorkerConfig(
            concurrency=concurrency or settings.WORKER_CONCURRENCY,
            poll_interval_seconds=poll_ms / 1000,
            max_running_age_seconds=settings.JOB_MAX_RUNNING_AGE_MS / 1000,
            heartbeat_interval_seconds=settings.JOB_HEARTBEAT_INTERVAL_MS / 1000,
            graceful_shutdown_timeout_seconds=settings.WORKER_GRACEFUL_SHUTDOWN_TIMEOUT_MS / 1000,
            shutdown_requeue=settings.WORKER_SHUTDOWN_REQUEUE,
            max_prefetch=self.max_prefetch,
            gc_threshold=settings.WORKER_GC_THRESHOLD or None,
            retry_policy=RetryPolicy(
                base_seconds=settings.JOB_RETRY_BASE_MS / 1000,
                max_seconds=settings.JOB_RETRY_MAX_MS / 1000,
            ),
            burst=burst,
            queues=queues,
            rate_limits=parse_rate_limits(settings.RATE_LIMITS),
        )


def build_runtime(
    settings: Settings,
    *,
    require_migrated: bool = True,
    create: bool = False,
    read_only: bool = False,
) -> Runtime:
    """Open the database of `settings` and (by default) refuse an un-migrated schema. A SQLite
    file that does not exist is refused unless `create` (only `dominus db upgrade` creates);
    `read_only` opens a SQLite file for reading alone (one-shot reads: list, show, stats)."""
    mode: SqliteMode = "rwc" if create else "ro" if read_only else "rw"
    engine = create_database_engine(settings.DATABASE_URL, sqlite_mode=mode)
    if require_migrated:
        ensure_migrated(engine)
    return Runtime(settings=settings, engine=engine)
