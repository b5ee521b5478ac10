"""The worker: poll, claim up to the free slots, dispatch to handlers, heartbeat, reclaim,
record outcomes, shut down gracefully.

Everything the worker writes goes through its loop thread (`run_once`), except progress, which
a handler writes (fenced, throttled). `run_once(now)` does one tick and never sleeps, so tests
step the loop with any clock; `run()` is the loop around it.

Sync handlers run on a pool of threads; `async def` handlers run as tasks on one event loop
thread (event_loop.py, ADR 0029). Both kinds share the worker's concurrency, are aborted by the
same signal and end through the same outcome path.

When each duty is due is `DutySchedule`'s to say (duties.py); the graceful shutdown's steps and
deadlines are `ShutdownSequence`'s (shutdown.py); the worker performs them. The attempts it holds,
from the claim until the store has the outcome, are kept by `Attempts` (attempts.py).
"""

from __future__ import annotations

import logging
import os
import queue
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import TypeVar

from dominus.errors import DatabaseError, DatabaseGoneError
from dominus.jobs.abort import AbortReason, AbortSignal
from dominus.jobs.attempts import Attempts
from dominus.jobs.backoff import DatabaseBackoff
from dominus.jobs.clock import utc_now
from dominus.jobs.collector import young_generation_threshold
from dominus.jobs.duties import DutySchedule
from dominus.jobs.event_loop import HandlerLoop
from dominus.jobs.execution import (
    AttemptServices,
    Finished,
    HandlerPool,
    RunningJob,
    Start,
    run_async_handler,
    run_handler,
)
from dominus.jobs.hooks import HookRunner
from dominus.jobs.limits import Limiters
from dominus.jobs.liveness import LivenessLock
from dominus.jobs.maintenance import MaintenanceThread, PeriodicDuty, housekeeping
from dominus.jobs.model import (
    ClaimRequest,
    DeadLetteredJob,
    Failed,
    Job,
    ReclaimedJob,
    Snoozed,
    WorkerInfo,
    held_until,
)
from dominus.jobs.outcome_log import dead_lettered, scheduled_retry
from dominus.jobs.prefetch import PrefetchBudget, StartGate
from dominus.jobs.queues import QueueShares
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
# A starting worker's housekeeping waits this long (or its interval, if shorter): it is never
# urgent to the second (an enqueue fold: readings count what is not folded; a first ANALYZE:
# claims plan without statistics meanwhile), and at once it would hold the write lock (SQLite)
# or load the server during the worker's first claims, tens of ms on a pre-filled queue.
FIRST_HOUSEKEEPING_AFTER_SECONDS = 1.0
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
        limiters: Limiters | None = None,
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
        # Reached by handlers (`context.limiter`), paused by their RateLimited (ADR 0053).
        self._limiters = limiters
        self._attempt_services = AttemptServices(
            store=store,
            progress_sink=store.record_progress,
            clock=clock,
            progress_interval_seconds=self._config.progress_interval_seconds,
            limiters=limiters,
        )
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
        self._attempts = Attempts(
            self._gate,
            start_async=self._start_async,
            sync_waiting=self._sync_jobs_waiting,
            shutdown_requeue=self._config.shutdown_requeue,
            retry_at=self._retry_at,
        )
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
        # When notified jobs fall due that this worker's clock did not see as due yet.
        self._notified_due: queue.SimpleQueue[datetime] = queue.SimpleQueue()
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
    def wake(self, due_at: datetime | None = None) -> None:
        """Look for work (called after an enqueue in this process, and by the change watcher).
        `due_at`, when the caller knows it: the earliest `run_at` of the new jobs. If this
        worker's clock does not see that as due yet (another process's clock runs a few ms ahead
        of this one's, or the job is scheduled a little later), the loop claims at that moment of
        its own clock, rather than now for nothing and then only at the next poll (ADR 0062)."""
        now = self._clock()
        horizon = now + timedelta(seconds=self._config.poll_interval_seconds)
        if due_at is not None and now < due_at <= horizon:
            self._notified_due.put(due_at)
        else:  # due already, unknown, or beyond the next regular poll: claim now, as always
            self._duties.request_poll(now)
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
        return self._attempts.running_count

    @property
    def handlers_in_flight(self) -> int:
        """Handlers dispatched whose call has not returned yet (`running_count` also counts
        those that returned until the next tick collects them). Exact between ticks."""
        return self._attempts.handlers_in_flight

    @property
    def handlers_started(self) -> int:
        """Handlers whose call has begun and whose job is not yet recorded here (a job claimed
        ahead counts once its handler starts, ADR 0033). From any thread: a snapshot."""
        return self._attempts.handlers_started

    # --- the loop ------------------------------------------------------------------------
    def run(self) -> None:
        """Run until shut down (or, in burst mode, until nothing is due). Never raises for
        database trouble: it logs, backs off and carries on; except DatabaseGoneError, when the
        database file was deleted or replaced: it stops at once, writing nothing more."""
        with young_generation_threshold(self._config.gc_threshold):
            self._run()

    def _run(self) -> None:
        log.info(
            "worker %s started: concurrency %d, types %s, queues %s, poll every %g s",
            self.id,
            self._config.concurrency,
            ",".join(self._types),
            _queues_shown(self._config.queues),
            self._config.poll_interval_seconds,
        )
        self._watcher.start(self.wake, self._check_cancels_soon, self.id)
        maintenance = self._maintenance_thread()
        try:
            while True:
                self._wake.clear()
                if self._database_gone is not None:
                    break
                now = self._clock()
                self.run_once(now)
                if not maintenance.started:
                    # After the first tick: registering and the first claim do not wait behind
                    # the duties' first turns for the write lock (SQLite) or the server, and the
                    # first reclaim and rescue passes run with this worker registered and its
                    # claims known, rather than being skipped until their next turn.
                    maintenance.start()
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

    def _maintenance_thread(self) -> MaintenanceThread:
        return MaintenanceThread(
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
                    first_after_seconds=min(
                        self._config.maintenance_interval_seconds, FIRST_HOUSEKEEPING_AFTER_SECONDS
                    ),
                ),
            ],
            verify=self._store.verify,
            on_gone=self._stop_for_good,
        )

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
            self._attempts.start_waiting_async()
        except Exception as error:  # noqa: BLE001 - the loop survives anything, and logs it
            self._back_off(now, error)
            return TickReport(failed=True)
        self._database_answered(now, time.monotonic() - started)
        return report

    @property
    def idle(self) -> bool:
        """Nothing running and nothing waiting to be recorded."""
        return self._attempts.idle

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
        if self._limiters is not None and self._config.rate_limits:
            # Before the worker's row: a failure here is retried with the registration.
            self._limiters.configure_all(self._config.rate_limits)
        self._store.register_worker(self._info)
        self._duties.registered = True
        if not self._attempts.holds_claims:
            # The row just written says this worker is alive now, which is all a heartbeat
            # without claims would write: the first one falls due an interval from here.
            self._duties.heartbeat_done(now)

    @property
    def _alive_to_others(self) -> bool:
        """Whether other workers can tell this one is alive: its liveness lock is held, or it
        took none (then only its heartbeat speaks for it, as before). While a lost lock is
        being taken again, this worker claims nothing: others may be taking it for dead."""
        return self._liveness is None or self._liveness.held

    def _collect(self, now: datetime) -> None:
        self._attempts.collect_finished()
        self._collect_reclaimed()
        self._collect_notified(now)
        self._attempts.return_waiting_too_long(now, self._config.prefetch_max_wait_seconds)
        self._attempts.start_waiting_async()
        self._attempts.abort_overdue(now)
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

    def _collect_reclaimed(self) -> None:
        """Jobs the maintenance thread put back to pending: claim when each falls due."""
        for due in _taken(self._reclaimed_due):
            self._duties.expect_retry_at(due)

    def _collect_notified(self, now: datetime) -> None:
        """Jobs notified before they were due by this worker's clock: claim when each falls
        due (at this tick if that time has come meanwhile)."""
        for due in _taken(self._notified_due):
            if due <= now:
                self._duties.claim_soon()
            else:
                self._duties.expect_due_at(due)

    def _retry_at(self, running: RunningJob) -> datetime:
        """When a failed attempt's job is due again, from the moment its failure is collected."""
        return self._retry.retry_at(running.job.job_type, running.job.attempts, self._clock())

    def _release_claims_in_doubt(self, now: datetime) -> None:
        """After a failed claim, give back what it claimed unseen, before the claims would go
        stale and be reclaimed as if this worker had crashed (an attempt spent for nothing)."""
        if not self._claims_in_doubt:
            return
        released = self._store.release_unseen_claims(self.id, self._attempts.claims(), now)
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
        # Every claim held, finished ones included: their outcome is known here but not yet
        # recorded (the database may have been unavailable), and a claim left to go stale
        # would be reclaimed and its result thrown away.
        held = dict(
            self._store.heartbeat(self.id, self._attempts.claims(), now, register_as=self._info)
        )
        self._duties.heartbeat_done(now)
        self._own_claims_fresh_since = now
        self._attempts.heartbeat_answered(held)

    def _maybe_check_cancels(self, now: datetime) -> None:
        if not self._duties.take_cancel_check(now, self._attempts.running_count):
            return
        for claim in self._store.cancel_requests(self.id):
            self._attempts.cancel(claim)
        self._return_paused()

    def _return_paused(self) -> None:
        """Jobs claimed ahead and not started whose queue was paused since go back to pending
        (ADR 0050): looked at with the cancel requests, and only while jobs wait."""
        waiting = self._attempts.waiting_queues()
        if not waiting:
            return
        paused = self._store.paused_queues() & waiting
        if paused and self._attempts.return_paused(paused):
            log.info(
                "queue(s) %s paused: jobs claimed ahead handed back", ", ".join(sorted(paused))
            )

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
        if self._config.burst:
            self._wake.set()  # a burst worker may be waiting for this look to finish
        return rescued

    def _settle_and_claim(self, now: datetime) -> tuple[TickReport, list[Job]]:
        outcomes = self._attempts.to_settle()
        free = self._config.concurrency + self._claim_ahead(now) - self._attempts.running_count
        can_claim = self._accepting and free > 0 and self._alive_to_others
        requested = can_claim and self._duties.take_poll_request(now)
        want_claim = can_claim and (requested or self._duties.claim_due(now))
        if not outcomes and not want_claim:
            return TickReport(), []
        claim_for = self._claim_requests(free, now) if want_claim else []
        if not outcomes and not claim_for:
            return TickReport(), []  # every share is full: nothing to write or claim
        try:
            accepted, claimed = self._store.settle(outcomes, now, claim_for=claim_for)
        except Exception:
            self._claims_in_doubt = self._claims_in_doubt or bool(claim_for)
            if requested:
                self.wake()  # keep the request for the tick after the backoff
            raise
        failures = self._attempts.settled(outcomes, accepted)
        for outcome, was_accepted in zip(outcomes, accepted, strict=True):
            if was_accepted and isinstance(outcome, Snoozed):
                self._duties.expect_retry_at(outcome.run_at)  # look again when it wakes
        for due in held_until(claimed):  # refused a rate key's token: look again when it frees
            self._duties.expect_retry_at(due)
        if want_claim:
            wanted = sum(request.limit for request in claim_for)
            self._duties.claimed(now, full=wanted > 0 and len(claimed) == wanted)
        self._after_failures(failures)
        return TickReport(claimed=len(claimed), settled=len(outcomes)), claimed

    def _claim_requests(self, free: int, now: datetime) -> list[ClaimRequest]:
        """What to claim for `free` slots: from every queue, from the named ones, or, with
        shares, each shared queue up to what its share leaves and the other named queues up to
        the slots the shares leave (claiming ahead counted there only)."""
        queues = self._config.queues
        if queues.every_queue:
            return [ClaimRequest(self.id, self._types, free)]
        if not queues.shared:
            return [ClaimRequest(self.id, self._types, free, queues.names)]
        held = self._attempts.unfinished_by_queue()
        requests = []
        for name, share in sorted(queues.shared.items()):
            requests.append(ClaimRequest(self.id, self._types, share - held[name], (name,)))
        if queues.unshared:
            pool = self._config.concurrency - sum(queues.shared.values())
            pool += self._claim_ahead(now) - sum(held[name] for name in queues.unshared)
            requests.append(ClaimRequest(self.id, self._types, pool, queues.unshared))
        return [request for request in requests if request.limit > 0]

    def _after_failures(self, failures: Sequence[tuple[Job, Failed]]) -> None:
        """Failures the store accepted: tell the dead-lettered, look again when retries fall
        due."""
        for job, failure in failures:
            if dead_lettered(job, failure):
                self._tell_dead_lettered(_failed_notice(job, failure, self._clock()))
            retry_at = scheduled_retry(job, failure)
            if retry_at is not None:
                self._duties.expect_retry_at(retry_at)

    def _tell_dead_lettered(self, notice: DeadLetteredJob) -> None:
        if self._dead_letter_hook is not None:
            self._dead_letter_hook.submit(notice)

    def wait_for_hooks(self, timeout: float) -> bool:
        """Test helper: block until every hook call made so far has returned."""
        return self._dead_letter_hook is None or self._dead_letter_hook.wait_idle(timeout)

    def _dispatch(self, job: Job, now: datetime) -> None:
        running = RunningJob(
            job=job,
            claim=job.claim,
            job_type=self._registry.get(job.job_type),
            abort=AbortSignal(),
            claimed_at=now,
            services=self._attempt_services,
        )
        if not self._attempts.add(running):
            # The same claim twice: the database lost the commit of an earlier claim (a server
            # crash under asynchronous commit) and this worker took the job again with the same
            # attempt number. Its first run is still here and its outcome will settle this
            # claim; running it a second time at once would break "never twice at the same time".
            log.warning("job %d claimed again while still running here; not run twice", job.id)
            return
        if running.job_type.is_async:
            return  # it waits in the ledger for the gate
        assert self._pool is not None
        self._pool.submit(running)

    def _start_async(self, running: RunningJob) -> None:
        """Hand an async job the gate let in to the event loop."""
        self._handler_loop().submit(running)

    def _sync_jobs_waiting(self) -> int:
        return 0 if self._pool is None else self._pool.waiting

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
        self._attempts.hand_over(finished)
        self._observe(finished)
        assert self._pool is not None
        if self._pool.waiting < self._prefetch.refill_below or self._attempts.async_waiting:
            self._wake_loop()

    async def _execute_async(self, running: RunningJob) -> None:
        """On the handler loop, the gate entered for it: the same as `_execute`."""
        try:
            if not running.begin(self._clock()):
                return
            _log_started(running.job)
            finished = await run_async_handler(running, self._clock)
        finally:
            self._gate.leave()
        self._attempts.hand_over(finished)
        self._observe(finished)
        if self._accepting:
            # Start the next job claimed ahead from here, as a pool thread takes its next one,
            # instead of a round through the worker's loop per job (ADR 0033). While shutting
            # down, only the loop starts (or returns) what waits.
            self._attempts.start_waiting_async()
        if self._attempts.async_waiting < self._prefetch.refill_below:
            self._wake_loop()

    def _wake_loop(self) -> None:
        """From a handler's thread: wake the loop, unless it is awake already. Setting the event
        takes its condition's lock, about once per job while the pool runs low; a loop that
        clears the event clears it before it collects, so what this thread handed over before
        finding the event set is collected all the same."""
        if not self._wake.is_set():
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
        if self._attempts.holds_claims:
            # Claims expire if they are not heartbeated: while holding any, try at least once
            # per heartbeat interval, however long the database has been failing.
            delay = min(delay, self._config.heartbeat_interval_seconds)
        self._backoff_until = now + timedelta(seconds=delay)
        self._backoff.log_failed_tick(log, "worker", error, delay)

    # --- shutdown ------------------------------------------------------------------------
    @property
    def _accepting(self) -> bool:
        return not self._shutdown.draining

    def _advance_shutdown(self, now: datetime) -> None:
        for step in self._shutdown.advance(now, self._attempts.running_count):
            match step:
                case ShutdownStep.DRAIN:
                    # `_accepting` is now False: nothing more is claimed.
                    self._attempts.return_waiting()
                case ShutdownStep.ABORT:
                    self._attempts.abort_unfinished(AbortReason.SHUTDOWN)
                case ShutdownStep.GIVE_UP:
                    # Handlers that ignored the abort: recorded without waiting any longer.
                    self._attempts.give_up(self._config.abort_grace_seconds)

    def _claim_ahead(self, now: datetime) -> int:
        """How many jobs to claim beyond the handler threads: the budget, unless a handler now
        running has already taken longer than the window (the jobs ahead are not all quick)."""
        return self._prefetch.jobs_while(self._attempts.longest_run_seconds(now))

    def _shutdown_finished(self) -> bool:
        return self._shutdown.draining and self._attempts.idle

    def _burst_finished(self) -> bool:
        return (
            self._accepting
            and self._attempts.idle
            and self._duties.nothing_left_to_claim()
            and self._rescue.settled()
        )

    def _close(self) -> None:
        for _ in range(FINAL_SETTLE_TRIES):
            outcomes = self._attempts.to_settle()
            if not outcomes:
                break
            try:
                accepted, _ = self._store.settle(outcomes, self._clock())
            except DatabaseError as error:
                log.error("could not record the last outcomes: %s", error)
                continue
            self._after_failures(self._attempts.settled(outcomes, accepted))
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
        self._attempts.abort_all(AbortReason.SHUTDOWN)
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
            and self._attempts.running_count < self._config.concurrency
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
        duties.extend(self._attempts.deadlines())
        shutdown_deadline = self._shutdown.next_deadline(self._attempts.running_count)
        if shutdown_deadline is not None:
            duties.append(shutdown_deadline)
        if self._attempts.jobs_waiting:
            # Finished handlers do not wake the loop while prefetched jobs wait (ADR 0033).
            duties.append(now + timedelta(seconds=self._config.settle_flush_seconds))
        return max(now, min(duties))

    def _database_duties(self) -> list[datetime]:
        slots = self._config.concurrency + self._prefetch.jobs_while(0.0)
        running = self._attempts.running_count
        can_claim = self._accepting and running < slots
        return self._duties.due_times(running=running, can_claim=can_claim)


def _taken(handed_over: queue.SimpleQueue[T]) -> Iterator[T]:
    """What other threads have put on `handed_over` so far, taken off it."""
    while True:
        try:
            yield handed_over.get_nowait()
        except queue.Empty:
            return


def _queues_shown(queues: QueueShares) -> str:
    if queues.every_queue:
        return "all"
    return ",".join(
        name if share is None else f"{name}={share}"
        for name, share in sorted(queues.shares.items())
    )


def _log_started(job: Job) -> None:
    if not log.isEnabledFor(logging.INFO):  # once per job: skip the call and its arguments
        return
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
