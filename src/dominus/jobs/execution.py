"""Running handlers: the thread pool, one attempt's bookkeeping, and how an attempt's ending
becomes an outcome for the store."""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from dominus.errors import JobAbortedError, PermanentJobError
from dominus.jobs.abort import AbortReason, AbortSignal
from dominus.jobs.context import (
    HandlerTransactions,
    JobContext,
    ProgressReporter,
    ProgressSink,
    jsonable,
)
from dominus.jobs.limits import Limiters
from dominus.jobs.model import (
    AttemptOutcome,
    Cancelled,
    Claim,
    Completed,
    Failed,
    Interrupted,
    Job,
    Snoozed,
)
from dominus.jobs.rate_limit import RateLimited
from dominus.jobs.registry import JobType
from dominus.jobs.snooze import Snooze
from dominus.jobs.store import JobStore

log = logging.getLogger("dominus.worker")


class Start(Enum):
    """Where a claimed attempt stands before its handler runs (ADR 0033)."""

    WAITING = "waiting"  # handed to the pool, behind other jobs (prefetched)
    STARTED = "started"  # its handler was called
    WITHHELD = "withheld"  # taken back by the worker before it started (cancel, shutdown)


@dataclass(frozen=True)
class AttemptServices:
    """What every attempt of one worker reaches through: made once per worker, not per job."""

    store: JobStore | None  # None: no handler transactions (tests that need none)
    progress_sink: ProgressSink
    clock: Callable[[], datetime]
    progress_interval_seconds: float
    # The rate limiters `context.limiter(key)` reaches, and `RateLimited` pauses (ADR 0053).
    limiters: Limiters | None = None


# Slotted: its fields are read many times per job, by the loop and the handler's thread.
@dataclass(slots=True)
class RunningJob:
    """One attempt this worker holds: waiting for a handler thread (prefetched), running, or
    finished but not yet recorded."""

    job: Job
    claim: Claim  # job.claim, built once: it is looked up on every tick
    job_type: JobType[Any]
    abort: AbortSignal
    claimed_at: datetime
    services: AttemptServices
    finished: bool = False
    # Set when the handler starts: a prefetched job's time waiting is not its run time.
    started_at: datetime | None = None
    deadline: datetime | None = None
    start: Start = Start.WAITING
    # Made when the handler first reports progress or opens a transaction (`AttemptTools`).
    _reporter: ProgressReporter | None = field(default=None, init=False, repr=False)
    _transactions: HandlerTransactions | None = field(default=None, init=False, repr=False)
    _start_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def limiters(self) -> Limiters | None:
        return self.services.limiters

    @property
    def completed_in_transaction(self) -> bool:
        transactions = self._transactions
        return transactions is not None and transactions.completed

    def unwritten_progress(self) -> dict[str, Any] | None:
        """The latest progress reported and not yet persisted (to write with the outcome)."""
        reporter = self._reporter
        return None if reporter is None else reporter.unwritten()

    def progress_reporter(self) -> ProgressReporter:
        """This attempt's progress reporter, made on the first call (from any thread)."""
        reporter = self._reporter
        if reporter is not None:
            return reporter
        with self._start_lock:
            if self._reporter is None:
                services = self.services
                self._reporter = ProgressReporter(
                    self.claim,
                    services.progress_sink,
                    services.clock,
                    services.progress_interval_seconds,
                    on_lost=self._lost,
                )
            return self._reporter

    def handler_transactions(self) -> HandlerTransactions | None:
        """This attempt's fenced transactions, made on the first call (None without a store)."""
        transactions = self._transactions
        if transactions is not None or self.services.store is None:
            return transactions
        reporter = self.progress_reporter()  # before the lock: it takes it too
        with self._start_lock:
            if self._transactions is None:
                services = self.services
                assert services.store is not None
                self._transactions = HandlerTransactions(
                    services.store, self.job, services.clock, self.abort, reporter
                )
            return self._transactions

    def _lost(self) -> None:
        self.abort.set(AbortReason.LOST)

    def begin(self, now: datetime) -> bool:
        """From the thread about to run the handler: start the attempt at `now` (its timeout
        counts from here), unless the worker withheld it first."""
        with self._start_lock:
            if self.start is not Start.WAITING:
                return False
            self.started_at = now
            if self.job.timeout_seconds:
                self.deadline = now + timedelta(seconds=self.job.timeout_seconds)
            self.start = Start.STARTED
            return True

    def withhold(self) -> bool:
        """From the worker's loop: take the attempt back if its handler has not started."""
        with self._start_lock:
            if self.start is not Start.WAITING:
                return False
            self.start = Start.WITHHELD
            return True


# Not frozen: a frozen dataclass sets each field through object.__setattr__, and one of these
# is made per job. Made in the handler's thread and only read after it is handed over.
@dataclass(slots=True)
class Finished:
    """What the handler thread saw: a return value or an exception."""

    running: RunningJob
    value: Any = None
    error: str | None = None
    traceback: str | None = None
    finished_at: datetime | None = None
    permanent: bool = False  # the error was a PermanentJobError: no retry
    # The handler raised Snooze: run it again this many seconds after it finished.
    snooze_seconds: float | None = None
    # ... because this rate-limit key is paused (RateLimited): its resume brings the job forward.
    snooze_key: str | None = None
    # The handler completed its job in a fenced transaction: nothing is left to record.
    recorded: bool = False


class HandlerPool:
    """Up to `size` daemon threads that run sync handlers, started as they are needed: a worker
    whose jobs are all `async def` (run on its event loop) starts none.

    Daemon threads, because Python cannot kill a thread: a handler that ignores its abort signal
    must not keep the process alive after a graceful shutdown has recorded its job as cancelled.
    `submit` and `close` are called from the worker's loop thread only. Jobs submitted beyond
    the free threads (prefetched, ADR 0033) wait in the inbox, in order.
    """

    def __init__(self, size: int, execute: Callable[[RunningJob], None], name: str) -> None:
        self._size = size
        self._name = name
        self._inbox: queue.SimpleQueue[RunningJob | None] = queue.SimpleQueue()
        self._execute = execute
        self._lock = threading.Lock()
        # Jobs submitted and not yet returned by a thread (in the inbox or running). Counted
        # down after the handler's result was handed back: a count that lags is safe (at worst
        # one thread more is started, up to `size`), a count of free threads that ran ahead was
        # not (a job could wait in the inbox while a thread could have been started for it).
        self._outstanding = 0
        # Jobs submitted and not yet taken by a thread.
        self._waiting = 0
        self._threads: list[threading.Thread] = []

    @property
    def waiting(self) -> int:
        return self._waiting

    @property
    def threads_started(self) -> int:
        return len(self._threads)

    @property
    def idle_threads(self) -> int:
        with self._lock:
            return max(0, len(self._threads) - self._outstanding)

    def submit(self, running: RunningJob) -> None:
        with self._lock:
            self._outstanding += 1
            self._waiting += 1
            enough = self._outstanding <= len(self._threads)
        self._inbox.put(running)
        if enough or len(self._threads) >= self._size:
            return  # a free thread takes it, or one is about to be free
        thread = threading.Thread(
            target=self._serve, name=f"{self._name}-handler-{len(self._threads)}", daemon=True
        )
        self._threads.append(thread)
        thread.start()

    def close(self) -> None:
        for _ in self._threads:
            self._inbox.put(None)

    def _serve(self) -> None:
        while True:
            running = self._inbox.get()
            if running is None:
                return
            with self._lock:
                self._waiting -= 1
            self._execute(running)
            with self._lock:
                self._outstanding -= 1


def run_handler(running: RunningJob, clock: Callable[[], datetime]) -> Finished:
    """Run one attempt of a sync handler in the calling (pool) thread. Never raises."""
    context = _context_for(running)
    try:
        payload = validated_payload(running)
        value = running.job_type.handler(payload, context)
    except Snooze as snooze:
        return _snoozed(running, context, _paused_for(running, snooze), clock)
    except Exception as error:  # noqa: BLE001 - any handler error is the attempt's failure
        return _raised(running, context, error, clock)
    return _returned(running, context, value, clock)


async def run_async_handler(running: RunningJob, clock: Callable[[], datetime]) -> Finished:
    """Run one attempt of an `async def` handler on the calling event loop. Never raises.

    The worker cancels the task when the attempt's abort signal is set (ADR 0029): the
    CancelledError that ends the handler then stands for the abort, described as a sync
    handler's `raise_if_set` would be, and the abort reason decides the outcome as for any
    handler (`outcome_of`). A handler that swallows the cancellation and returns is treated as
    one that ignored its abort signal and returned."""
    context = _context_for(running)
    try:
        payload = validated_payload(running)
        value = await running.job_type.handler(payload, context)
    except asyncio.CancelledError as cancelled:
        reason = running.abort.reason
        error: BaseException = cancelled
        if reason is not None:
            error = JobAbortedError(f"job aborted: {reason.value}")
        return _raised(running, context, error, clock)
    except Snooze as snooze:
        snooze = await asyncio.to_thread(_paused_for, running, snooze)
        return _snoozed(running, context, snooze, clock)
    except Exception as error:  # noqa: BLE001 - any handler error is the attempt's failure
        return _raised(running, context, error, clock)
    return _returned(running, context, value, clock)


def validated_payload(running: RunningJob) -> Any:
    """The attempt's payload, as its job type's model makes it: from the JSON text the job was
    claimed with, while nothing has decoded it and the model validates the text as it would the
    dict (`JobType.reads_payload_text`), so no dict is made; otherwise from the dict."""
    job_type = running.job_type
    text = running.job.payload_text
    if text is not None and job_type.reads_payload_text:
        return job_type.payload_model.model_validate_json(text)
    return job_type.payload_model.model_validate(running.job.payload)


def _paused_for(running: RunningJob, snooze: Snooze) -> Snooze:
    """A handler's RateLimited pauses its key for everyone (the later pause wins) and snoozes
    the job until the pause ends; any other snooze is as it was raised. When the pause cannot
    be written, the job is snoozed all the same: waiting is still right."""
    limiters = running.limiters
    if not isinstance(snooze, RateLimited) or snooze.enforced or limiters is None:
        if isinstance(snooze, RateLimited) and not snooze.enforced:
            log.warning("job %d: no rate limiters here to pause %s", running.job.id, snooze.key)
        return snooze
    try:
        state = limiters.pause(snooze.key, snooze.retry_after_seconds, snooze.reason)
    except Exception as error:  # noqa: BLE001 - the snooze stands without the shared pause
        log.warning("job %d: could not pause %s: %s", running.job.id, snooze.key, error)
        return snooze
    if state.paused_until is None:
        return snooze
    seconds = limiters.seconds_until(state.paused_until)
    return RateLimited(snooze.key, seconds, snooze.reason, enforced=True)


def _snoozed(
    running: RunningJob, context: JobContext, snooze: Snooze, clock: Callable[[], datetime]
) -> Finished:
    if context.completed_in_transaction:
        return _raised(running, context, snooze, clock)  # completed: nothing left to snooze
    key = snooze.key if isinstance(snooze, RateLimited) else None
    return Finished(running, finished_at=clock(), snooze_seconds=snooze.seconds, snooze_key=key)


def _context_for(running: RunningJob) -> JobContext:
    return JobContext.of_attempt(running.job, running.abort, running, running.services.limiters)


def _returned(
    running: RunningJob, context: JobContext, value: Any, clock: Callable[[], datetime]
) -> Finished:
    # Asked of the attempt, which the context would ask: one property fewer per job.
    if running.completed_in_transaction:
        return Finished(running, finished_at=clock(), recorded=True)
    if value is None:  # most handlers return nothing: no need for jsonable's type checks
        return Finished(running, finished_at=clock())
    try:
        result = jsonable(value)
    except TypeError as error:
        return _raised(running, context, error, clock)
    return Finished(running, value=result, finished_at=clock())


def _raised(
    running: RunningJob,
    context: JobContext,
    error: BaseException,
    clock: Callable[[], datetime],
) -> Finished:
    if context.completed_in_transaction:
        # The job's completion was committed with the handler's own writes; what failed after
        # it cannot undo that.
        log.warning(
            "job %d raised after completing in its transaction (ignored): %s",
            running.job.id,
            describe_exception(error),
        )
        return Finished(running, finished_at=clock(), recorded=True)
    return Finished(
        running,
        error=describe_exception(error),
        traceback="".join(traceback.format_exception(error)),
        finished_at=clock(),
        permanent=isinstance(error, PermanentJobError),
    )


def describe_exception(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def outcome_of(
    finished: Finished, *, shutdown_requeue: bool, retry_at: Callable[[RunningJob], datetime]
) -> AttemptOutcome:
    """Turn what the handler did into what the store records.

    The abort reason decides first: a cancelled job is cancelled even if its handler ignored the
    signal and returned a result (which is dropped); a job stopped by shutdown is interrupted; a
    timed-out attempt is a failure (retried like any other). A handler's PermanentJobError is a
    failure that is not retried. A lost claim needs no special case: the store's fence rejects
    the outcome and records that it was dropped.
    """
    running = finished.running
    claim = running.claim
    reason = running.abort.reason
    job = running.job
    started_at = running.started_at
    duration = None
    if finished.finished_at is not None and started_at is not None:
        duration = (finished.finished_at - started_at).total_seconds()
    progress = running.unwritten_progress()
    pickup = job.pickup_seconds(started_at)
    if reason is None and finished.error is None and finished.snooze_seconds is None:
        # The common outcome, made without the other outcomes' keyword dictionary (this runs
        # for every job a worker settles).
        return Completed(
            claim,
            finished.value,
            progress=progress,
            job_type=job.job_type,
            duration_seconds=duration,
            pickup_seconds=pickup,
        )
    about: dict[str, Any] = {
        "job_type": job.job_type,
        "progress": progress,
        "duration_seconds": duration,
        "pickup_seconds": pickup,
    }
    return _less_common_outcome(
        finished, about, shutdown_requeue=shutdown_requeue, retry_at=retry_at
    )


def _less_common_outcome(
    finished: Finished,
    about: dict[str, Any],
    *,
    shutdown_requeue: bool,
    retry_at: Callable[[RunningJob], datetime],
) -> AttemptOutcome:
    """`outcome_of` an attempt aborted, snoozed, failed or completed after a lost claim, with
    what every outcome carries in `about`."""
    running = finished.running
    claim = running.claim
    reason = running.abort.reason
    if reason is AbortReason.CANCELLED:
        return Cancelled(claim, result_dropped=finished.value is not None, **about)
    if reason is AbortReason.SHUTDOWN:
        return Interrupted(claim, requeue=shutdown_requeue, **about)
    if reason is AbortReason.TIMEOUT:
        message = f"timed out after {running.job.timeout_seconds:g} s"
        if finished.error:
            message += f" ({finished.error})"
        return Failed(claim, message, retry_at(running), traceback=finished.traceback, **about)
    if finished.snooze_seconds is not None:
        wake_at = (finished.finished_at or running.claimed_at) + timedelta(
            seconds=finished.snooze_seconds
        )
        return Snoozed(
            claim,
            run_at=wake_at,
            seconds=finished.snooze_seconds,
            rate_key=finished.snooze_key,
            **about,
        )
    if finished.error is not None:
        return Failed(
            claim,
            finished.error,
            retry_at(running),
            traceback=finished.traceback,
            permanent=finished.permanent,
            **about,
        )
    return Completed(claim, finished.value, **about)
