"""The worker: poll, claim up to the free slots, dispatch to handlers, heartbeat, reclaim,
record outcomes, shut down gracefully.

Everything the worker writes goes through its loop thread (`run_once`), except progress, which
a handler writes (fenced, throttled). `run_once(now)` does one tick and never sleeps, so tests
step the loop with any clock; `run()` is the loop around it.

Sync handlers run on a pool of threads; `async def` handlers run as tasks on one event loop
thread (event_loop.py, ADR 0029). Both kinds share the worker's concurrency, are aborted by the
same signal and end through the same outcome path.

When each duty is due is `DutySchedule`'s to say (duties.py); the graceful shutdown's steps and
deadlines are `ShutdownSequence`'s (shutdown.py); the worker performs them.
"""

from __future__ import annotations

import logging
import os
import queue
import secrets
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import TypeVar

from dominus.errors import DatabaseBusyError, DatabaseError, DatabaseGoneError
from dominus.jobs.abort import AbortReason, AbortSignal
from dominus.jobs.backoff import DatabaseBackoff
from dominus.jobs.clock import utc_now
from dominus.jobs.context import HandlerTransactions, ProgressReporter
from dominus.jobs.duties import DutySchedule
from dominus.jobs.event_loop import HandlerLoop
from dominus.jobs.execution import (
    Finished,
    HandlerPool,
    RunningJob,
    Start,
    outcome_of,
    run_async_handler,
    run_handler,
)
from dominus.jobs.hooks import HookRunner
from dominus.jobs.liveness import LivenessLock
from dominus.jobs.maintenance import MaintenanceThread, PeriodicDuty, housekeeping
from dominus.jobs.model import (
    AttemptOutcome,
    Cancelled,
    Claim,
    DeadLetteredJob,
    Failed,
    Interrupted,
    Job,
    ReclaimedJob,
    Returned,
    WorkerInfo,
)
from dominus.jobs.outcome_log import dead_lettered, log_settled, scheduled_retry
from dominus.jobs.prefetch import PrefetchBudget, StartGate
from dominus.jobs.reaper import StaleJobReaper
from dominus.jobs.registry import HandlerRegistry
from dominus.jobs.rescue import DeadWorkerRescue
from dominus.jobs.retry import RetryPolicies
from dominus.jobs.shutdown import ShutdownSequence, ShutdownStep
from dominus.jobs.store import JobStore
from dominus.jobs.wakeup import ChangeWatcher, NoChangeWatcher
from dominus.jobs.worker_config import TickReport, WorkerConfig

log = logging.getLogger("dominus.worker")

T = TypeVar("T")

# How many times the final settle at shutdown is tried before the rows are left to liveness.
FINAL_SETTLE_TRIES = 3
# How long a stopping worker waits for its dead-letter hook calls (webhooks) to finish.
HOOK_DRAIN_SECONDS = 10.0

# Called (off the loop thread) for each job this worker's outcomes or reaper dead-lettered.
DeadLetterHook = Callable[[DeadLetteredJob], None]


def new_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class Worker:
    def __init__(
        self,
        store: JobStore,
        registry: HandlerRegistry,
        config: WorkerConfig | None = None,
        *,
        clock: Callable[[], datetime] = utc_now,
        watcher: ChangeWatcher | None = None,
        worker_id: str | None = None,
        on_dead_letter: DeadLetterHook | None = None,
    ) -> None:
        if len(registry) == 0:
            raise ValueError("a worker needs at least one registered job type")
        self.id = worker_id or new_worker_id()
        self._store = store
        self._registry = registry
        self._types = registry.names()
        self._config = config or WorkerConfig()
        self._clock = clock
        self._watcher = watcher or NoChangeWatcher()
        self._retry = RetryPolicies(registry, self._config.retry_policy)
        # Dead-letter notices go to a thread of their own: a slow hook never delays heartbeats.
        self._dead_letter_hook = (
            None if on_dead_letter is None else HookRunner("dead-letter", on_dead_letter)
        )
        self._backoff = DatabaseBackoff(self._config.poll_interval_seconds)
        self._prefetch = PrefetchBudget(
            self._config.max_prefetch, self._config.prefetch_window_seconds
        )
        # Handlers started at once, both kinds: the concurrency, whatever was claimed ahead.
        self._gate = StartGate(self._config.concurrency)
        # Async jobs claimed and not yet handed to the event loop (waiting for the gate). Taken
        # from by the loop thread and by the event loop's thread as a handler ends, under the lock.
        self._async_waiting: deque[RunningJob] = deque()
        self._async_waiting_lock = threading.Lock()
        self._running: dict[Claim, RunningJob] = {}
        self._unfinished = 0
        self._finished: queue.SimpleQueue[Finished] = queue.SimpleQueue()
        self._unsettled: list[AttemptOutcome] = []
        self._wake = threading.Event()
        self._pool: HandlerPool | None = None
        self._async_loop: HandlerLoop | None = None  # started with the first async job
        self._duties = DutySchedule(
            poll_seconds=self._config.poll_interval_seconds,
            heartbeat_seconds=self._config.heartbeat_interval_seconds,
            cancel_check_seconds=self._config.cancel_check_interval_seconds,
        )
        self._shutdown = ShutdownSequence(
            graceful_seconds=self._config.graceful_shutdown_timeout_seconds,
            abort_grace_seconds=self._config.abort_grace_seconds,
        )
        self._database_gone: DatabaseGoneError | None = None
        self._info: WorkerInfo | None = None  # as registered
        self._backoff_until: datetime | None = None
        self._reaper = StaleJobReaper(
            store,
            max_running_age_seconds=self._config.max_running_age_seconds,
            interval_seconds=self._config.reclaim_interval_seconds,
            retry_delay=self._retry.delay,
            heartbeat_interval_seconds=self._config.heartbeat_interval_seconds,
        )
        # When the current run of failed ticks began (None while the database answers).
        self._trouble_since: datetime | None = None
        # A settle that claimed raised: its claims may have committed all the same.
        self._claims_in_doubt = False
        # Every claim this worker holds has a heartbeat at least this recent (its last
        # heartbeat, or its first tick): what makes a reclaim pass safe for it (ADR 0032).
        self._own_claims_fresh_since: datetime | None = None
        # When jobs the maintenance thread reclaimed fall due: the loop looks again then.
        self._reclaimed_due: queue.SimpleQueue[datetime] = queue.SimpleQueue()
        # The lock this worker's death releases, taken when it registers (None: none held).
        self._liveness: LivenessLock | None = None
        self._rescue = DeadWorkerRescue(
            store,
            self.id,
            confirm_seconds=self._config.dead_worker_confirm_seconds,
            settle_seconds=self._config.dead_worker_settle_seconds,
            retry_delay=self._retry.delay,
            troubled_since=self._reaper.seconds_since_trouble,
        )

    # --- control from other threads ----------------------------------------------------
    def wake(self) -> None:
        """Look for work now (called after an enqueue in this process)."""
        self._duties.request_poll(self._clock())
        self._wake.set()

    def request_shutdown(self) -> None:
        """Stop claiming, let running jobs finish (up to the graceful timeout), then stop."""
        self._shutdown.request()
        self._wake.set()

    def _stop_for_good(self, error: DatabaseGoneError) -> None:
        """From the maintenance thread: the database is gone, so nothing this worker records can
        be kept. The loop stops at its next turn, without the graceful drain."""
        log.error("%s", error)
        self._database_gone = error
        self._shutdown.request()
        self._wake.set()

    def _check_cancels_soon(self) -> None:
        """A cancel request may concern one of this worker's jobs: look at the next tick."""
        self._duties.request_cancel_check()
        self._wake.set()

    @property
    def running_count(self) -> int:
        """Handlers dispatched and not yet returned (or given up on at shutdown)."""
        return self._unfinished

    @property
    def handlers_in_flight(self) -> int:
        """Handlers dispatched whose call has not returned yet (`running_count` also counts
        those that returned until the next tick collects them). Exact between ticks."""
        # max: the late result of a handler given up on at shutdown still passes the queue.
        return max(0, self._unfinished - self._finished.qsize())

    @property
    def handlers_started(self) -> int:
        """Handlers whose call has begun and whose job is not yet recorded here (a job claimed
        ahead counts once its handler starts, ADR 0033). From any thread: a snapshot."""
        held = list(self._running.values())
        return sum(1 for running in held if running.start is Start.STARTED and not running.finished)

    # --- the loop ------------------------------------------------------------------------
    def run(self) -> None:
        """Run until shut down (or, in burst mode, until nothing is due). Never raises for
        database trouble: it logs, backs off and carries on; except DatabaseGoneError, when the
        database file was deleted or replaced: it stops at once, writing nothing more."""
        log.info(
            "worker %s started: concurrency %d, types %s, poll every %g s",
            self.id,
            self._config.concurrency,
            ",".join(self._types),
            self._config.poll_interval_seconds,
        )
        self._watcher.start(self.wake, self._check_cancels_soon, self.id)
        maintenance = MaintenanceThread(
            [
                PeriodicDuty(
                    "reclaim", self._reaper.interval_seconds, lambda: self.reclaim(self._clock())
                ),
                PeriodicDuty(
                    "dead worker rescue",
                    self._config.dead_worker_check_interval_seconds,
                    lambda: self.rescue(self._clock()),
                ),
                PeriodicDuty(
                    "queue maintenance",
                    self._config.maintenance_interval_seconds,
                    housekeeping(self._store.maintain),
                ),
            ],
            verify=self._store.verify,
            on_gone=self._stop_for_good,
        )
        maintenance.start()
        try:
            while True:
                self._wake.clear()
                if self._database_gone is not None:
                    break
                now = self._clock()
                self.run_once(now)
                if self._config.burst and self._burst_finished():
                    log.info("burst: nothing left to do")
                    self.request_shutdown()
                    continue
                if self._shutdown_finished():
                    break
                self._sleep(now)
        finally:
            maintenance.stop()
            if self._database_gone is None:
                self._close()
            else:
                self._abandon()
        if self._database_gone is not None:
            raise self._database_gone

    def run_once(self, now: datetime) -> TickReport:
        """One tick: collect → settle and claim → dispatch.

        - collect: what changed without the database: handlers that finished, timeouts that
          passed, the shutdown step due;
        - settle and claim: the duties due (registration, heartbeat, cancel checks, reclaim),
          then one transaction that records finished attempts and claims for free slots;
        - dispatch: hand the claimed jobs to the handler pool.

        Database errors are logged and back off; the tick never raises for them."""
        self._ensure_pool()
        self._collect(now)
        if not self._database_due(now):
            return TickReport(failed=True)
        started = time.monotonic()
        try:
            self._perform_duties(now)
            report, claimed = self._settle_and_claim(now)
            for job in claimed:
                self._dispatch(job, now)
            self._start_waiting_async()
        except Exception as error:  # noqa: BLE001 - the loop survives anything, and logs it
            self._back_off(now, error)
            return TickReport(failed=True)
        self._database_answered(now, time.monotonic() - started)
        return report

    @property
    def idle(self) -> bool:
        """Nothing running and nothing waiting to be recorded."""
        return not self._running and not self._unsettled

    # --- tick steps ----------------------------------------------------------------------
    def _ensure_pool(self) -> None:
        if self._pool is None:
            self._pool = HandlerPool(self._config.concurrency, self._execute, "dominus")

    def _register(self, now: datetime) -> None:
        if self._duties.registered:
            return
        if self._liveness is None:
            lock = self._store.hold_liveness(self.id)
            if lock is not None and lock.acquire():
                self._liveness = lock
        self._info = WorkerInfo(
            id=self.id,
            hostname=socket.gethostname(),
            pid=os.getpid(),
            concurrency=self._config.concurrency,
            job_types=list(self._types),
            started_at=now,
            last_seen_at=now,
            liveness_lock=None if self._liveness is None else self._liveness.kind,
        )
        self._store.register_worker(self._info)
        self._duties.registered = True

    @property
    def _alive_to_others(self) -> bool:
        """Whether other workers can tell this one is alive: its liveness lock is held, or it
        took none (then only its heartbeat speaks for it, as before). While a lost lock is
        being taken again, this worker claims nothing: others may be taking it for dead."""
        return self._liveness is None or self._liveness.held

    def _collect(self, now: datetime) -> None:
        self._collect_finished()
        self._collect_reclaimed()
        self._return_jobs_waiting_too_long(now)
        self._start_waiting_async()
        self._enforce_timeouts(now)
        self._advance_shutdown(now)

    def _database_due(self, now: datetime) -> bool:
        """False while backing off after a failed tick."""
        return self._backoff_until is None or now >= self._backoff_until

    def _perform_duties(self, now: datetime) -> None:
        if self._own_claims_fresh_since is None:
            self._own_claims_fresh_since = now  # before its first claim
        self._register(now)
        self._release_claims_in_doubt(now)
        self._maybe_heartbeat(now)
        self._maybe_check_cancels(now)

    def _database_answered(self, now: datetime, seconds: float) -> None:
        """The tick reached the database. A failure streak or a stall it ends is told to the
        reaper (ADR 0026): the other workers were probably cut off too."""
        if self._trouble_since is not None:
            self._reaper.database_trouble(self._trouble_since, now)
        if seconds > self._reaper.stall_seconds:
            self._reaper.database_trouble(now, self._clock())  # a stall: others were blocked too
        self._trouble_since = None
        self._backoff.succeeded()
        self._backoff_until = None

    def _collect_finished(self) -> None:
        for finished in _taken(self._finished):
            if finished.running.finished:
                continue  # given up on at shutdown and already recorded as interrupted
            finished.running.finished = True
            self._unfinished -= 1
            if finished.recorded:
                self._completed_by_handler(finished.running)
                continue
            self._unsettled.append(
                outcome_of(
                    finished,
                    shutdown_requeue=self._config.shutdown_requeue,
                    retry_at=self._retry_at,
                )
            )

    def _collect_reclaimed(self) -> None:
        """Jobs the maintenance thread put back to pending: claim when each falls due."""
        for due in _taken(self._reclaimed_due):
            self._duties.expect_retry_at(due)

    def _completed_by_handler(self, running: RunningJob) -> None:
        """The handler completed its job in its own fenced transaction (ADR 0024): the store
        already says so, and the claim is no longer held."""
        self._running.pop(running.claim, None)
        log.info(
            "job %d %s completed (attempt %d/%d) in the handler's transaction",
            running.job.id,
            running.job.job_type,
            running.job.attempts,
            running.job.max_attempts,
        )

    def _retry_at(self, running: RunningJob) -> datetime:
        return self._retry.retry_at(running.job.job_type, running.job.attempts, self._clock())

    def _enforce_timeouts(self, now: datetime) -> None:
        for running in self._running.values():
            if running.finished or running.deadline is None or now < running.deadline:
                continue
            if running.abort.set(AbortReason.TIMEOUT):
                log.warning(
                    "job %d %s timed out after %g s; aborting",
                    running.job.id,
                    running.job.job_type,
                    running.job.timeout_seconds,
                )

    def _release_claims_in_doubt(self, now: datetime) -> None:
        """After a failed claim, give back what it claimed unseen, before the claims would go
        stale and be reclaimed as if this worker had crashed (an attempt spent for nothing)."""
        if not self._claims_in_doubt:
            return
        released = self._store.release_unseen_claims(self.id, list(self._running), now)
        self._claims_in_doubt = False
        if released:
            log.warning(
                "returned %d job(s) to pending that a failed claim had taken unseen: %s",
                len(released),
                ", ".join(map(str, released)),
            )
            self._duties.claim_soon()

    def _maybe_heartbeat(self, now: datetime) -> None:
        if not self._duties.heartbeat_due(now):
            return
        # Every claim still in `_running` is held, finished ones included: their outcome is
        # known here but not yet recorded (the database may have been unavailable), and a
        # claim left to go stale would be reclaimed and its result thrown away.
        held = dict(
            self._store.heartbeat(self.id, list(self._running), now, register_as=self._info)
        )
        self._duties.heartbeat_done(now)
        self._own_claims_fresh_since = now
        lost: list[Claim] = []
        for claim, running in self._running.items():
            if running.finished or running.completed_in_transaction:
                continue
            if claim not in held:
                if running.abort.set(AbortReason.LOST):
                    log.warning(
                        "job %d: this worker lost its claim (reclaimed elsewhere); aborting",
                        claim.job_id,
                    )
                if self._take_back(running):
                    lost.append(claim)  # never started: nothing to record
            elif held[claim]:
                self._abort_cancelled(running)
        for claim in lost:
            del self._running[claim]

    def _maybe_check_cancels(self, now: datetime) -> None:
        if not self._duties.take_cancel_check(now, self.running_count):
            return
        for claim in self._store.cancel_requests(self.id):
            running = self._running.get(claim)
            if running is not None and not running.finished:
                self._abort_cancelled(running)

    @staticmethod
    def _abort_lost(abort: AbortSignal) -> None:
        abort.set(AbortReason.LOST)

    def _abort_cancelled(self, running: RunningJob) -> None:
        if not running.abort.set(AbortReason.CANCELLED):
            return
        if self._take_back(running):
            log.info("job %d %s: cancelled before it started", running.job.id, running.job.job_type)
            self._unsettled.append(Cancelled(running.claim, job_type=running.job.job_type))
            return
        log.info("job %d %s: cancel requested; aborting", running.job.id, running.job.job_type)

    def _take_back(self, running: RunningJob) -> bool:
        """Withhold a prefetched job whose handler has not started (ADR 0033): it counts as
        finished here, and the caller says what to record for it."""
        if not running.withhold():
            return False
        running.finished = True
        self._unfinished -= 1
        return True

    def reclaim(self, now: datetime) -> list[ReclaimedJob]:
        """Reclaim the jobs of silent workers across the cluster, if a pass is due. A duty of
        the maintenance thread (ADR 0032), kept out of the tick so that a slow scan never holds
        up claiming; tests that step the loop call it between ticks."""
        fresh_since = self._own_claims_fresh_since
        if fresh_since is None:
            return []  # before the first tick: this worker's claims are not known yet
        reclaimed = self._reaper.maybe_reclaim(now, fresh_since)
        self._after_reclaim(reclaimed, now)
        return reclaimed

    def _after_reclaim(self, reclaimed: list[ReclaimedJob], now: datetime) -> None:
        for job in reclaimed:
            if job.dead_lettered:
                self._tell_dead_lettered(_reclaimed_notice(job, now))
            else:
                self._reclaimed_due.put(job.retry_at)
        if reclaimed:
            self._wake.set()

    def rescue(self, now: datetime) -> list[ReclaimedJob]:
        """Reclaim the jobs of workers found dead by their free liveness locks (rescue.py). A
        duty of the maintenance thread; tests that step the loop call it between ticks."""
        if not self._duties.registered:
            return []
        rescued = self._rescue.maybe_rescue(now)
        self._after_reclaim(rescued, now)
        return rescued

    def _settle_and_claim(self, now: datetime) -> tuple[TickReport, list[Job]]:
        outcomes = list(self._unsettled)
        free = self._config.concurrency + self._claim_ahead(now) - self.running_count
        can_claim = self._accepting and free > 0 and self._alive_to_others
        requested = can_claim and self._duties.take_poll_request(now)
        want_claim = can_claim and (requested or self._duties.claim_due(now))
        if not outcomes and not want_claim:
            return TickReport(), []
        claim_for = (self.id, self._types, free) if want_claim else None
        try:
            accepted, claimed = self._store.settle(outcomes, now, claim_for=claim_for)
        except Exception:
            self._claims_in_doubt = self._claims_in_doubt or claim_for is not None
            if requested:
                self.wake()  # keep the request for the tick after the backoff
            raise
        self._unsettled.clear()
        if want_claim:
            self._duties.claimed(now, full=len(claimed) == free)
        for outcome, was_accepted in zip(outcomes, accepted, strict=True):
            self._after_settle(outcome, was_accepted)
        return TickReport(claimed=len(claimed), settled=len(outcomes)), claimed

    def _after_settle(self, outcome: AttemptOutcome, accepted: bool) -> None:
        running = self._running.pop(outcome.claim, None)
        if running is None:
            return
        log_settled(running.job, outcome, accepted)
        if accepted and isinstance(outcome, Failed) and dead_lettered(running.job, outcome):
            self._tell_dead_lettered(_failed_notice(running.job, outcome, self._clock()))
        retry_at = scheduled_retry(running.job, outcome) if accepted else None
        if retry_at is not None:
            self._duties.expect_retry_at(retry_at)

    def _tell_dead_lettered(self, notice: DeadLetteredJob) -> None:
        if self._dead_letter_hook is not None:
            self._dead_letter_hook.submit(notice)

    def wait_for_hooks(self, timeout: float) -> bool:
        """Test helper: block until every hook call made so far has returned."""
        return self._dead_letter_hook is None or self._dead_letter_hook.wait_idle(timeout)

    def _dispatch(self, job: Job, now: datetime) -> None:
        claim = job.claim
        if claim in self._running:
            # The same claim twice: the database lost the commit of an earlier claim (a server
            # crash under asynchronous commit) and this worker took the job again with the same
            # attempt number. Its first run is still here and its outcome will settle this
            # claim; running it a second time at once would break "never twice at the same time".
            log.warning("job %d claimed again while still running here; not run twice", job.id)
            return
        abort = AbortSignal()
        reporter = ProgressReporter(
            claim,
            self._store.record_progress,
            self._clock,
            self._config.progress_interval_seconds,
            on_lost=lambda: self._abort_lost(abort),
        )
        running = RunningJob(
            job=job,
            claim=claim,
            job_type=self._registry.get(job.job_type),
            abort=abort,
            reporter=reporter,
            claimed_at=now,
            transactions=HandlerTransactions(self._store, job, self._clock, abort, reporter),
        )
        self._running[claim] = running
        self._unfinished += 1
        if running.job_type.is_async:
            with self._async_waiting_lock:
                self._async_waiting.append(running)
            return
        assert self._pool is not None
        self._pool.submit(running)

    def _start_waiting_async(self) -> None:
        """Hand waiting async jobs to the event loop while the gate has room (withheld ones are
        dropped: they are recorded already)."""
        with self._async_waiting_lock:
            while self._async_waiting:
                running = self._async_waiting[0]
                if running.start is not Start.WAITING:
                    self._async_waiting.popleft()
                    continue
                if not self._gate.try_enter():
                    return
                self._async_waiting.popleft()
                self._handler_loop().submit(running)

    def _handler_loop(self) -> HandlerLoop:
        if self._async_loop is None:
            self._async_loop = HandlerLoop(
                self._execute_async,
                "dominus",
                close_grace_seconds=self._config.abort_grace_seconds,
            )
        return self._async_loop

    def _execute(self, running: RunningJob) -> None:
        """In a pool thread: wait at the gate, run the handler, hand the result to the loop.
        The loop is woken at once unless enough prefetched jobs still wait (ADR 0033): then it
        collects at its next flush, or when the pool runs low."""
        if running.start is not Start.WAITING:
            return  # withheld while it waited: the loop has recorded it
        self._gate.enter()
        try:
            if not running.begin(self._clock()):
                return
            _log_started(running.job)
            finished = run_handler(running, self._clock)
        finally:
            self._gate.leave()
        self._finished.put(finished)
        self._observe(finished)
        assert self._pool is not None
        if self._pool.waiting < self._prefetch.refill_below or self._async_waiting:
            self._wake.set()

    async def _execute_async(self, running: RunningJob) -> None:
        """On the handler loop, the gate entered for it: the same as `_execute`."""
        try:
            if not running.begin(self._clock()):
                return
            _log_started(running.job)
            finished = await run_async_handler(running, self._clock)
        finally:
            self._gate.leave()
        self._finished.put(finished)
        self._observe(finished)
        if self._accepting:
            # Start the next job claimed ahead from here, as a pool thread takes its next one,
            # instead of a round through the worker's loop per job (ADR 0033). While shutting
            # down, only the loop starts (or returns) what waits.
            self._start_waiting_async()
        if len(self._async_waiting) < self._prefetch.refill_below:
            self._wake.set()

    def _observe(self, finished: Finished) -> None:
        started = finished.running.started_at
        if finished.finished_at is not None and started is not None:
            self._prefetch.observe((finished.finished_at - started).total_seconds())

    def _back_off(self, now: datetime, error: Exception) -> None:
        delay = self._backoff.failed()
        if self._trouble_since is None:
            self._trouble_since = now
            self._reaper.trouble_began(now)
        if self._running:
            # Claims expire if they are not heartbeated: while holding any, try at least once
            # per heartbeat interval, however long the database has been failing.
            delay = min(delay, self._config.heartbeat_interval_seconds)
        self._backoff_until = now + timedelta(seconds=delay)
        failures = self._backoff.consecutive_failures
        if isinstance(error, DatabaseBusyError):
            log.warning("database busy (%d in a row); next try in %.2f s", failures, delay)
        elif isinstance(error, DatabaseError):
            log.error("%s (%d in a row); next try in %.2f s", error, failures, delay)
        else:
            log.exception("worker tick failed (%d in a row); next try in %.2f s", failures, delay)

    # --- shutdown ------------------------------------------------------------------------
    @property
    def _accepting(self) -> bool:
        return not self._shutdown.draining

    def _advance_shutdown(self, now: datetime) -> None:
        for step in self._shutdown.advance(now, self.running_count):
            match step:
                case ShutdownStep.DRAIN:
                    # `_accepting` is now False: nothing more is claimed.
                    self._return_waiting_jobs()
                case ShutdownStep.ABORT:
                    for running in self._running.values():
                        if not running.finished:
                            running.abort.set(AbortReason.SHUTDOWN)
                case ShutdownStep.GIVE_UP:
                    self._give_up_on_running()

    @property
    def _jobs_waiting(self) -> bool:
        """Jobs claimed ahead wait for a handler thread or for the gate."""
        return bool(self._async_waiting) or (self._pool is not None and self._pool.waiting > 0)

    def _claim_ahead(self, now: datetime) -> int:
        """How many jobs to claim beyond the handler threads: the budget, unless a handler now
        running has already taken longer than the window (the jobs ahead are not all quick)."""
        longest = max(
            (
                (now - running.started_at).total_seconds()
                for running in self._running.values()
                if running.started_at is not None and not running.finished
            ),
            default=0.0,
        )
        return self._prefetch.jobs_while(longest)

    def _return_waiting_jobs(self) -> None:
        """Prefetched jobs whose handlers have not started go back to pending at once, their
        attempts not spent, for other workers to run (ADR 0033)."""
        for running in self._running.values():
            if not running.finished and self._take_back(running):
                self._unsettled.append(_returned(running, RETURNED_AT_SHUTDOWN))

    def _return_jobs_waiting_too_long(self, now: datetime) -> None:
        """A job claimed ahead that has waited `max_wait` behind slow handlers goes back to
        pending for a worker with a free slot (ADR 0033): claiming ahead bets that the jobs
        ahead are quick, and must not hold a job up when they were not."""
        if not self._jobs_waiting:
            return
        oldest_allowed = now - timedelta(seconds=self._config.prefetch_max_wait_seconds)
        for running in self._running.values():
            if running.finished or running.claimed_at > oldest_allowed:
                continue
            if self._take_back(running):
                self._unsettled.append(_returned(running, RETURNED_AFTER_WAITING))

    def _give_up_on_running(self) -> None:
        """Handlers that ignored the abort: record their jobs as interrupted without waiting."""
        for running in list(self._running.values()):
            if running.finished:
                continue
            running.finished = True
            self._unfinished -= 1
            if running.completed_in_transaction:
                self._completed_by_handler(running)  # recorded; only slow to return
                continue
            log.warning(
                "job %d %s did not stop within %g s of its abort; recording it anyway",
                running.job.id,
                running.job.job_type,
                self._config.abort_grace_seconds,
            )
            self._unsettled.append(
                Interrupted(
                    running.claim,
                    requeue=self._config.shutdown_requeue,
                    progress=running.reporter.unwritten(),
                    job_type=running.job.job_type,
                )
            )

    def _shutdown_finished(self) -> bool:
        return self._shutdown.draining and not self._running and not self._unsettled

    def _burst_finished(self) -> bool:
        return (
            self._accepting
            and not self._running
            and not self._unsettled
            and self._duties.nothing_left_to_claim()
        )

    def _close(self) -> None:
        for _ in range(FINAL_SETTLE_TRIES):
            if not self._unsettled:
                break
            try:
                accepted, _ = self._store.settle(self._unsettled, self._clock())
            except DatabaseError as error:
                log.error("could not record the last outcomes: %s", error)
                continue
            for outcome, was_accepted in zip(self._unsettled, accepted, strict=True):
                self._after_settle(outcome, was_accepted)
            self._unsettled.clear()
        try:
            self._release_claims_in_doubt(self._clock())
        except DatabaseError as error:
            log.error("could not return the jobs of a failed claim: %s", error)
        try:
            if self._duties.registered:
                self._store.mark_worker_stopped(self.id, self._clock())
        except DatabaseError as error:
            log.error("could not mark worker %s stopped: %s", self.id, error)
        self._release_liveness()
        self._close_handlers()
        self._watcher.close()
        if self._dead_letter_hook is not None:
            self._dead_letter_hook.close(HOOK_DRAIN_SECONDS)
        log.info("worker %s stopped", self.id)

    def _abandon(self) -> None:
        """Stop without writing: abort every handler (their jobs stay `running` in the lost
        database, which nobody will read again) and release the threads."""
        for running in self._running.values():
            running.abort.set(AbortReason.SHUTDOWN)
        self._release_liveness()
        self._close_handlers()
        self._watcher.close()
        log.error("worker %s stopped: its database is gone", self.id)

    def _release_liveness(self) -> None:
        if self._liveness is not None:
            self._liveness.release()

    def _close_handlers(self) -> None:
        """Release the pool's threads and stop the handler loop (its tasks still running, which
        the worker gave up on, are cancelled first)."""
        if self._pool is not None:
            self._pool.close()
        if self._async_loop is not None:
            self._async_loop.close()

    def _sleep(self, now: datetime) -> None:
        """Wait until the next duty is due, waking early for finished handlers, local enqueues,
        shutdown requests and (while slots are free) changes seen by the watcher."""
        timeout = max(0.0, (self._next_duty(now) - now).total_seconds())
        watch = (
            self._watcher.needs_polling
            and self._accepting
            and self.running_count < self._config.concurrency
        )
        if not watch:
            self._wake.wait(timeout)
            return
        slice_seconds = self._config.change_check_interval_seconds
        give_up = time.monotonic() + timeout  # measured, so slow slices do not stretch the sleep
        while (remaining := give_up - time.monotonic()) > 0:
            if self._wake.wait(min(remaining, slice_seconds)):
                return
            if self._watcher.changed():
                self._duties.claim_soon()
                return

    def _next_duty(self, now: datetime) -> datetime:
        """When the loop must tick again at the latest. Only duties that a tick at that time
        will actually perform count, so the loop never spins on a time already past."""
        if self._backoff_until is not None and self._backoff_until > now:
            duties = [self._backoff_until]  # nothing touches the database before then
        else:
            duties = self._database_duties()
        duties.extend(
            running.deadline
            for running in self._running.values()
            if running.deadline is not None and not running.finished and not running.abort.is_set()
        )
        shutdown_deadline = self._shutdown.next_deadline(self.running_count)
        if shutdown_deadline is not None:
            duties.append(shutdown_deadline)
        if self._jobs_waiting:
            # Finished handlers do not wake the loop while prefetched jobs wait (ADR 0033).
            duties.append(now + timedelta(seconds=self._config.settle_flush_seconds))
        return max(now, min(duties))

    def _database_duties(self) -> list[datetime]:
        slots = self._config.concurrency + self._prefetch.jobs_while(0.0)
        can_claim = self._accepting and self.running_count < slots
        return self._duties.due_times(running=self.running_count, can_claim=can_claim)


def _taken(handed_over: queue.SimpleQueue[T]) -> Iterator[T]:
    """What other threads have put on `handed_over` so far, taken off it."""
    while True:
        try:
            yield handed_over.get_nowait()
        except queue.Empty:
            return


RETURNED_AT_SHUTDOWN = "returned to pending unstarted at worker shutdown (claimed ahead)"
RETURNED_AFTER_WAITING = "returned to pending unstarted: it waited too long behind slower jobs"


def _returned(running: RunningJob, why: str) -> Returned:
    return Returned(running.claim, why=why, job_type=running.job.job_type)


def _log_started(job: Job) -> None:
    log.info(
        "job %d %s started (attempt %d/%d)",
        job.id,
        job.job_type,
        job.attempts,
        job.max_attempts,
    )


def _failed_notice(job: Job, outcome: Failed, now: datetime) -> DeadLetteredJob:
    return DeadLetteredJob(
        job_id=job.id,
        job_type=job.job_type,
        attempts=job.attempts,
        max_attempts=job.max_attempts,
        error=outcome.error or "failed",
        permanent=outcome.permanent,
        reclaimed=False,
        at=now,
    )


def _reclaimed_notice(job: ReclaimedJob, now: datetime) -> DeadLetteredJob:
    return DeadLetteredJob(
        job_id=job.job_id,
        job_type=job.job_type,
        attempts=job.attempt,
        max_attempts=None,
        error=f"worker {job.from_worker} stopped heartbeating during attempt {job.attempt}",
        permanent=False,
        reclaimed=True,
        at=now,
    )
