"""What a handler receives besides its payload: the job, its abort signal, a progress reporter,
a logger, and transactions fenced on its claim for its own writes."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import Any, Protocol

from pydantic import BaseModel
from sqlalchemy import Connection

from dominus.errors import ClaimLostError
from dominus.jobs.abort import AbortReason, AbortSignal
from dominus.jobs.limits import KeyLimiter, Limiters
from dominus.jobs.model import Claim, Completed, Job
from dominus.jobs.store import FencedTransaction, JobStore

log = logging.getLogger(__name__)

# (claim, progress, now) -> whether the claim still holds
ProgressSink = Callable[[Claim, dict[str, Any], datetime], bool]


class ProgressReporter:
    """Persists a job's progress, at most once per `interval_seconds`; the latest value is
    always kept and written with the job's outcome, so nothing reported is lost to throttling."""

    def __init__(
        self,
        claim: Claim,
        sink: ProgressSink,
        clock: Callable[[], datetime],
        interval_seconds: float,
        on_lost: Callable[[], None],
    ) -> None:
        self._claim = claim
        self._sink = sink
        self._clock = clock
        self._interval = interval_seconds
        self._on_lost = on_lost
        self._lock = threading.Lock()
        self._latest: dict[str, Any] | None = None
        self._unwritten = False
        self._last_write: datetime | None = None

    def report(self, progress: dict[str, Any]) -> None:
        now = self._clock()
        with self._lock:
            self._latest = dict(progress)
            self._unwritten = True
            due = (
                self._last_write is None
                or (now - self._last_write).total_seconds() >= self._interval
            )
            if not due:
                return
            self._last_write = now
            self._unwritten = False
            snapshot = self._latest
        try:
            if not self._sink(self._claim, snapshot, now):
                self._on_lost()
        except Exception as error:  # noqa: BLE001 - progress is best effort; the job carries on
            log.warning("job %s: could not save progress: %s", self._claim.job_id, error)
            with self._lock:
                self._unwritten = True

    def unwritten(self) -> dict[str, Any] | None:
        """The latest progress if it has not been persisted yet (to write with the outcome)."""
        if self._latest is None:
            # Nothing ever reported (most jobs): no lock needed to say so. A report racing this
            # read is as if it came just after the lock was taken.
            return None
        with self._lock:
            return self._latest if self._unwritten else None


def jsonable(value: Any) -> Any:
    """A handler's result as the JSON document stored on the job."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    try:
        json.dumps(value)
    except (TypeError, ValueError) as error:
        raise TypeError(f"the handler's result is not JSON serializable: {error}") from error
    return value


class HandlerTransactions:
    """Opens one attempt's fenced transactions (ADR 0024) and remembers whether one of them
    completed the job. Used from the handler's thread; `completed` is read by the loop."""

    def __init__(
        self,
        store: JobStore,
        job: Job,
        clock: Callable[[], datetime],
        abort: AbortSignal,
        reporter: ProgressReporter,
    ) -> None:
        self._store = store
        self._job = job
        self._clock = clock
        self._abort = abort
        self._reporter = reporter
        self._open: FencedTransaction | None = None
        self.completed = False

    @property
    def _claim(self) -> Claim:
        # Built when a transaction needs it, not for every attempt dispatched (most never open
        # one): `job.claim` makes a new token each time.
        return self._job.claim

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        if self.completed:
            raise RuntimeError(f"job {self._job.id} was already completed in a transaction")
        if self._open is not None:
            raise RuntimeError("a handler transaction is already open; they do not nest")
        try:
            with self._store.fenced_transaction(self._claim) as transaction:
                self._open = transaction
                try:
                    yield transaction.connection
                finally:
                    self._open = None
        except ClaimLostError:
            # Stop the rest of the attempt too: another attempt owns the job now.
            self._abort.set(AbortReason.LOST)
            raise
        if transaction.completed:
            self.completed = True

    def complete(self, connection: Connection, result: Any) -> None:
        transaction = self._open
        if transaction is None or transaction.connection is not connection:
            raise RuntimeError("complete() takes the connection of the open ctx.transaction()")
        now = self._clock()
        started = self._job.started_at
        outcome = Completed(
            self._claim,
            result=jsonable(result),
            progress=self._reporter.unwritten(),
            job_type=self._job.job_type,
            duration_seconds=(now - started).total_seconds() if started else None,
            # From the claim, as the duration: this path does not see the handler's own start.
            pickup_seconds=self._job.pickup_seconds(started),
        )
        transaction.complete(outcome, now)


class AttemptTools(Protocol):
    """What a worker's attempt makes for its handler on first use: most handlers report no
    progress and open no transaction, and a worker makes a context for every job it runs."""

    @property
    def completed_in_transaction(self) -> bool: ...

    def progress_reporter(self) -> ProgressReporter: ...

    def handler_transactions(self) -> HandlerTransactions | None: ...


class JobContext:
    """Passed to every handler as its second argument. Read-only."""

    __slots__ = (
        "_abort",
        "_attempt",
        "_job",
        "_limiters",
        "_logger",
        "_progress_reporter",
        "_transactions",
    )

    def __init__(
        self,
        job: Job,
        abort: AbortSignal,
        logger: logging.LoggerAdapter[logging.Logger],
        progress_reporter: ProgressReporter,
        transactions: HandlerTransactions | None = None,
        limiters: Limiters | None = None,
    ) -> None:
        self._job = job
        self._abort = abort
        self._logger: logging.LoggerAdapter[logging.Logger] | None = logger
        self._progress_reporter: ProgressReporter | None = progress_reporter
        self._transactions = transactions
        self._limiters = limiters
        self._attempt: AttemptTools | None = None

    @classmethod
    def of_attempt(
        cls, job: Job, abort: AbortSignal, attempt: AttemptTools, limiters: Limiters | None
    ) -> JobContext:
        """A worker's context: its logger, progress reporter and transactions are made by the
        first call that needs them (the reporter and transactions by `attempt`, which keeps
        them: the worker reads the unwritten progress and the completion from there)."""
        context = cls.__new__(cls)
        context._job = job
        context._abort = abort
        context._logger = None
        context._progress_reporter = None
        context._transactions = None
        context._limiters = limiters
        context._attempt = attempt
        return context

    @property
    def job(self) -> Job:
        return self._job

    @property
    def abort(self) -> AbortSignal:
        return self._abort

    @property
    def limiters(self) -> Limiters | None:
        return self._limiters

    @property
    def logger(self) -> logging.LoggerAdapter[logging.Logger]:
        logger = self._logger
        if logger is None:
            # Two threads of one handler may both make one: equal adapters, either will do.
            job = self._job
            logger = logging.LoggerAdapter(job_logger(job.job_type), {"job_id": job.id})
            self._logger = logger
        return logger

    @property
    def progress_reporter(self) -> ProgressReporter:
        if self._attempt is not None:
            return self._attempt.progress_reporter()
        assert self._progress_reporter is not None  # given to the constructor
        return self._progress_reporter

    @property
    def transactions(self) -> HandlerTransactions | None:
        if self._attempt is not None:
            return self._attempt.handler_transactions()
        return self._transactions

    def limiter(self, key: str) -> KeyLimiter:
        """The rate limiter of `key`, shared by every process (ADR 0053), its waits ended by
        this job's abort signal: `ctx.limiter("rdap:host").acquire(deadline_seconds=30)`.
        Raises RuntimeError when the worker was started without limiters."""
        if self.limiters is None:
            raise RuntimeError("this worker has no rate limiters (Worker(limiters=...))")
        return self.limiters.for_key(key, self.abort)

    def progress(self, **fields: Any) -> None:
        """Report progress, e.g. `ctx.progress(stage="dns", done=40, total=100)`. Persisted
        (throttled) and shown by `dominus jobs show` / `jobs wait`."""
        self.progress_reporter.report(fields)

    async def aprogress(self, **fields: Any) -> None:
        """`progress` for an `async def` handler: the (throttled, fenced) write runs on a thread
        of the loop's executor, so the event loop never waits for the database. The other
        database calls (`transaction`, `complete`) are synchronous too: an async handler makes
        them in a function it runs with `await asyncio.to_thread(...)` (ADR 0029)."""
        await asyncio.to_thread(self.progress_reporter.report, fields)

    def transaction(self) -> AbstractContextManager[Connection]:
        """`with ctx.transaction() as conn:` a write transaction on the job database for the
        handler's own rows that commits only while this attempt still owns the job. The claim is
        checked in the same transaction (at its start, and under the job row's lock just before
        COMMIT); when it was lost (the job was reclaimed from this worker), the transaction rolls
        back and `dominus.errors.ClaimLostError` is raised, and the abort signal is set (LOST).
        Transactions do not nest."""
        return self._handler_transactions().transaction()

    def complete(self, connection: Connection, result: Any) -> None:
        """Complete the job inside the open `ctx.transaction()` (on its `connection`): the job is
        `completed` with `result` if and only if that transaction commits. The handler's return
        value is then not recorded again (whatever it returns or raises afterwards)."""
        self._handler_transactions().complete(connection, result)

    @property
    def completed_in_transaction(self) -> bool:
        if self._attempt is not None:
            return self._attempt.completed_in_transaction  # without making the transactions
        return self._transactions is not None and self._transactions.completed

    def _handler_transactions(self) -> HandlerTransactions:
        transactions = self.transactions
        if transactions is None:
            raise RuntimeError("this job context has no store: it cannot open transactions")
        return transactions


@functools.lru_cache(maxsize=256)
def job_logger(job_type: str) -> logging.Logger:
    return logging.getLogger(f"dominus.job.{job_type}")
