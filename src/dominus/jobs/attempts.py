"""The attempts a worker holds, from its claim until the store has its outcome.

An attempt is held from the moment it is dispatched until its outcome is recorded (or refused,
its claim lost). Meanwhile it is:

- waiting: claimed ahead of a free handler (ADR 0033), in the pool's inbox (sync) or here until
  the `StartGate` lets it start (async). It can still be taken back: cancelled, returned to
  pending at shutdown or after waiting too long, or dropped when its claim was lost;
- started: its handler runs;
- finished: its handler returned and its thread handed the result over; the loop collects it;
- to settle: its outcome waits for the loop's next settle.

`running_count` counts the attempts dispatched and not finished here, waiting or started.

Handler threads hand results over (`hand_over`) and the event loop's thread starts waiting async
jobs (`start_waiting_async`); the counts may be read from any thread; everything else is called
from the worker's loop thread.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta

from dominus.jobs.abort import AbortReason
from dominus.jobs.execution import Finished, RunningJob, Start, outcome_of
from dominus.jobs.model import (
    AttemptOutcome,
    Cancelled,
    Claim,
    Failed,
    Interrupted,
    Job,
    Returned,
)
from dominus.jobs.outcome_log import log_settled
from dominus.jobs.prefetch import StartGate

log = logging.getLogger("dominus.worker")

RETURNED_AT_SHUTDOWN = "returned to pending unstarted at worker shutdown (claimed ahead)"
RETURNED_AFTER_WAITING = "returned to pending unstarted: it waited too long behind slower jobs"
RETURNED_QUEUE_PAUSED = "returned to pending unstarted: its queue {queue!r} was paused"


class Attempts:
    def __init__(
        self,
        gate: StartGate,
        *,
        start_async: Callable[[RunningJob], None],
        sync_waiting: Callable[[], int],
        shutdown_requeue: bool,
        retry_at: Callable[[RunningJob], datetime],
    ) -> None:
        """`gate`: the worker's concurrency, which an async job enters before `start_async`
        hands it to the event loop; `sync_waiting()`: how many sync jobs wait in the pool's
        inbox; `shutdown_requeue` and `retry_at`: what the outcome of an attempt stopped by
        shutdown, or of a failed one, says."""
        self._gate = gate
        self._start_async = start_async
        self._sync_waiting = sync_waiting
        self._shutdown_requeue = shutdown_requeue
        self._retry_at = retry_at
        # Every attempt held, by claim, until its outcome is recorded.
        self._running: dict[Claim, RunningJob] = {}
        self._unfinished = 0
        # Results handed over by handler threads, for the loop to collect.
        self._finished: queue.SimpleQueue[Finished] = queue.SimpleQueue()
        self._unsettled: list[AttemptOutcome] = []
        # Async jobs not yet handed to the event loop (waiting for the gate). Taken from by the
        # loop thread and by the event loop's thread as a handler ends, under the lock.
        self._async_waiting: deque[RunningJob] = deque()
        self._async_waiting_lock = threading.Lock()

    # --- counts ----------------------------------------------------------------------------
    @property
    def running_count(self) -> int:
        """Attempts dispatched and not finished here (waiting or started)."""
        return self._unfinished

    @property
    def handlers_in_flight(self) -> int:
        """Attempts whose handler has not returned yet (`running_count` also counts those that
        returned until the loop collects them). Exact between ticks."""
        # max: the late result of a handler given up on at shutdown still passes the queue.
        return max(0, self._unfinished - self._finished.qsize())

    @property
    def handlers_started(self) -> int:
        """Attempts whose handler has begun and whose outcome is not yet recorded. From any
        thread: a snapshot."""
        held = list(self._running.values())
        return sum(1 for running in held if running.start is Start.STARTED and not running.finished)

    @property
    def idle(self) -> bool:
        """Nothing held and nothing waiting to be recorded."""
        return not self._running and not self._unsettled

    @property
    def holds_claims(self) -> bool:
        """Whether any claim is held (finished-but-unrecorded attempts included)."""
        return bool(self._running)

    @property
    def async_waiting(self) -> int:
        """Async jobs waiting for the gate."""
        return len(self._async_waiting)

    @property
    def jobs_waiting(self) -> bool:
        """Jobs claimed ahead wait for a handler thread or for the gate."""
        return bool(self._async_waiting) or self._sync_waiting() > 0

    def unfinished_by_queue(self) -> Counter[str]:
        """Attempts dispatched and not finished here (waiting or started), by queue: what each
        queue holds of the worker's slots (its share, `dominus.jobs.queues`)."""
        return Counter(
            running.job.queue for running in self._running.values() if not running.finished
        )

    def waiting_queues(self) -> set[str]:
        """The queues of the jobs claimed ahead whose handlers have not started."""
        return {
            running.job.queue
            for running in self._running.values()
            if not running.finished and running.start is Start.WAITING
        }

    def holds(self, claim: Claim) -> bool:
        return claim in self._running

    def claims(self) -> list[Claim]:
        """Every claim held, finished-but-unrecorded attempts included: their outcome is known
        here but not yet recorded, and a claim left to go stale would be reclaimed elsewhere
        and its result thrown away."""
        return list(self._running)

    def longest_run_seconds(self, now: datetime) -> float:
        """How long the longest-running handler has run at `now` (0 if none runs)."""
        return max(
            (
                (now - running.started_at).total_seconds()
                for running in self._running.values()
                if running.started_at is not None and not running.finished
            ),
            default=0.0,
        )

    def deadlines(self) -> Iterator[datetime]:
        """The timeouts still to enforce: of handlers running and not aborted yet."""
        return (
            running.deadline
            for running in self._running.values()
            if running.deadline is not None and not running.finished and not running.abort.is_set()
        )

    # --- from dispatch to the handler's end ------------------------------------------------
    def add(self, running: RunningJob) -> bool:
        """Hold a claimed attempt, unless its claim is held already (False: the caller must not
        run it). An async one waits here for the gate; a sync one is the caller's to hand to
        the pool."""
        # One lookup of the claim, not a `holds` and then a store: this runs for every job.
        if self._running.setdefault(running.claim, running) is not running:
            return False
        self._unfinished += 1
        if running.job_type.is_async:
            with self._async_waiting_lock:
                self._async_waiting.append(running)
        return True

    def start_waiting_async(self) -> None:
        """Start waiting async jobs while the gate has room (withheld ones are dropped: they
        are recorded already). From the loop or the event loop's thread."""
        with self._async_waiting_lock:
            while self._async_waiting:
                running = self._async_waiting[0]
                if running.start is not Start.WAITING:
                    self._async_waiting.popleft()
                    continue
                if not self._gate.try_enter():
                    return
                self._async_waiting.popleft()
                self._start_async(running)

    def hand_over(self, finished: Finished) -> None:
        """From the thread that ran the handler: its result, for the loop to collect."""
        self._finished.put(finished)

    def collect_finished(self) -> None:
        """Turn the results handed over so far into outcomes to settle."""
        results = self._finished
        # Checked with `empty` rather than ended by get_nowait's queue.Empty: an exception per
        # call costs more than the rest of a completed job's collection. Only this thread takes
        # from the queue, so what `empty` says is there stays there.
        while not results.empty():
            finished = results.get_nowait()
            if finished.running.finished:
                continue  # given up on at shutdown and already recorded as interrupted
            finished.running.finished = True
            self._unfinished -= 1
            if finished.recorded:
                self._completed_by_handler(finished.running)
                continue
            self._unsettled.append(
                outcome_of(
                    finished, shutdown_requeue=self._shutdown_requeue, retry_at=self._retry_at
                )
            )

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

    # --- aborts and take-backs -------------------------------------------------------------
    def _take_back(self, running: RunningJob) -> bool:
        """Withhold a job claimed ahead whose handler has not started (ADR 0033): it counts as
        finished here, and the caller says what to record for it."""
        if not running.withhold():
            return False
        running.finished = True
        self._unfinished -= 1
        return True

    def abort_overdue(self, now: datetime) -> None:
        """Abort the handlers whose timeout has passed at `now`."""
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

    def abort_unfinished(self, reason: AbortReason) -> None:
        for running in self._running.values():
            if not running.finished:
                running.abort.set(reason)

    def abort_all(self, reason: AbortReason) -> None:
        """Abort every attempt held, finished or not (the worker stops without recording)."""
        for running in self._running.values():
            running.abort.set(reason)

    def cancel(self, claim: Claim) -> None:
        """A cancel was requested for `claim`: abort its handler, or record the job cancelled
        at once if it has not started."""
        running = self._running.get(claim)
        if running is not None and not running.finished:
            self._cancel(running)

    def _cancel(self, running: RunningJob) -> None:
        if not running.abort.set(AbortReason.CANCELLED):
            return
        if self._take_back(running):
            log.info("job %d %s: cancelled before it started", running.job.id, running.job.job_type)
            self._unsettled.append(Cancelled(running.claim, job_type=running.job.job_type))
            return
        log.info("job %d %s: cancel requested; aborting", running.job.id, running.job.job_type)

    def heartbeat_answered(self, held: Mapping[Claim, bool]) -> None:
        """The store's answer to a heartbeat of `claims()`: the claims still held, each with
        whether a cancel was requested. An attempt whose claim is gone is aborted (dropped if
        it never started: there is nothing to record); a requested cancel is honoured."""
        # The lost attempts still waiting are withheld before any running one is aborted: an
        # aborted handler frees its slot at once, and a waiting job whose claim is gone too
        # could otherwise start in it before this loop reached it.
        lost: list[Claim] = []
        for claim, running in self._running.items():
            if running.finished or running.completed_in_transaction or claim in held:
                continue
            if self._take_back(running):
                running.abort.set(AbortReason.LOST)
                log.warning(
                    "job %d: this worker lost its claim (reclaimed elsewhere) before it started",
                    claim.job_id,
                )
                lost.append(claim)  # never started: nothing to record
        for claim in lost:
            del self._running[claim]
        for claim, running in self._running.items():
            if running.finished or running.completed_in_transaction:
                continue
            if claim not in held:
                if running.abort.set(AbortReason.LOST):
                    log.warning(
                        "job %d: this worker lost its claim (reclaimed elsewhere); aborting",
                        claim.job_id,
                    )
            elif held[claim]:
                self._cancel(running)

    def return_waiting(self) -> None:
        """At shutdown: jobs claimed ahead whose handlers have not started go back to pending
        at once, their attempts not spent, for other workers to run (ADR 0033)."""
        for running in self._running.values():
            if not running.finished and self._take_back(running):
                self._unsettled.append(_returned(running, RETURNED_AT_SHUTDOWN))

    def return_waiting_too_long(self, now: datetime, max_wait_seconds: float) -> None:
        """A job claimed ahead that has waited `max_wait_seconds` behind slow handlers goes
        back to pending for a worker with a free slot (ADR 0033): claiming ahead bets that the
        jobs ahead are quick, and must not hold a job up when they were not."""
        if not self.jobs_waiting:
            return
        oldest_allowed = now - timedelta(seconds=max_wait_seconds)
        for running in self._running.values():
            if running.finished or running.claimed_at > oldest_allowed:
                continue
            if self._take_back(running):
                self._unsettled.append(_returned(running, RETURNED_AFTER_WAITING))

    def return_paused(self, paused: set[str]) -> int:
        """Jobs claimed ahead from a queue paused since go back to pending unstarted, their
        attempts not spent (ADR 0050): a pause stops jobs from starting, wherever they wait.
        Returns how many."""
        returned = 0
        for running in self._running.values():
            if running.finished or running.job.queue not in paused:
                continue
            if self._take_back(running):
                why = RETURNED_QUEUE_PAUSED.format(queue=running.job.queue)
                self._unsettled.append(_returned(running, why))
                returned += 1
        return returned

    def give_up(self, abort_grace_seconds: float) -> None:
        """At shutdown, handlers that ignored their abort for `abort_grace_seconds`: record
        their jobs as interrupted without waiting any longer."""
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
                abort_grace_seconds,
            )
            self._unsettled.append(
                Interrupted(
                    running.claim,
                    requeue=self._shutdown_requeue,
                    progress=running.unwritten_progress(),
                    job_type=running.job.job_type,
                )
            )

    # --- settling ----------------------------------------------------------------------------
    def to_settle(self) -> list[AttemptOutcome]:
        """The outcomes waiting to be recorded. They stay here until `settled` (a settle that
        fails leaves them for the next try)."""
        return list(self._unsettled)

    def settled(
        self, outcomes: Sequence[AttemptOutcome], accepted: Sequence[bool]
    ) -> list[tuple[Job, Failed]]:
        """The store recorded `outcomes` (all of `to_settle`), each accepted or refused (its
        claim was lost): either way the attempt is over here. Returns the accepted failures,
        with their jobs, for the caller's notices (dead letters, retries to look for)."""
        self._unsettled.clear()
        failures: list[tuple[Job, Failed]] = []
        for outcome, was_accepted in zip(outcomes, accepted, strict=True):
            running = self._running.pop(outcome.claim, None)
            if running is None:
                continue
            log_settled(running.job, outcome, was_accepted)
            if was_accepted and isinstance(outcome, Failed):
                failures.append((running.job, outcome))
        return failures


def _returned(running: RunningJob, why: str) -> Returned:
    return Returned(running.claim, why=why, job_type=running.job.job_type)
