"""What a job is, in memory: its states, its row, its history and its dead-letter entry.

State machine (who moves a job out of each state):

    pending   → running     a worker claims it (attempts + 1)
              → cancelled   a user cancels it
    running   → completed   the owning worker, when the handler returns
              → pending     the owning worker when the handler raised Snooze(seconds):
                            run_at = now + seconds, the attempt not spent, no error
              → pending     the owning worker after a failed attempt with attempts left
                            (run_at = now + backoff), a reaper reclaiming a stale job, or a
                            worker shutting down with WORKER_SHUTDOWN_REQUEUE
              → failed      the owning worker (or a reaper) when the last attempt failed,
                            or at once when the handler raised PermanentJobError; a
                            dead-letter entry is written in the same transaction
              → cancelled   the owning worker, after a cancel request or at shutdown
    failed    → pending     `dlq requeue` / `jobs retry` (same id, attempts reset)
    cancelled → pending     `jobs retry`
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime
from enum import StrEnum
from itertools import repeat
from typing import Any, overload

JsonObject = dict[str, Any]

# The queue of a job whose caller and handler name none (`dominus.jobs.queues`).
DEFAULT_QUEUE = "default"


class JobStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def is_terminal(self) -> bool:
        return self in (JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED)


ACTIVE_STATUSES = (JobStatus.PENDING, JobStatus.RUNNING)


class EventKind(StrEnum):
    """Transitions off the happy path, recorded in `job_events`."""

    FAILED = "failed"  # an attempt raised or timed out (message + traceback)
    RETRY_SCHEDULED = "retry_scheduled"  # back to pending, not before details.run_at
    RECLAIMED = "reclaimed"  # a stale running job was taken back from a silent worker
    CANCEL_REQUESTED = "cancel_requested"  # a running job was asked to stop
    CANCELLED = "cancelled"  # the job ended cancelled
    DEAD_LETTERED = "dead_lettered"  # attempts exhausted (or a permanent error): failed + DLQ
    REQUEUED = "requeued"  # back to pending from the DLQ (`dlq requeue`)
    RETRIED = "retried"  # back to pending by `jobs retry`
    RELEASED = "released"  # returned to pending at worker shutdown, attempt not spent
    LOST = "lost"  # a worker finished an attempt it no longer owned; its outcome was dropped
    SNOOZED = "snoozed"  # its handler raised Snooze: pending again at details.run_at, not spent


# Events after which a new "round" of attempts starts; dead-letter entries collect the errors
# of the current round only.
ROUND_START_EVENTS = (EventKind.REQUEUED, EventKind.RETRIED)
ATTEMPT_ERROR_EVENTS = (EventKind.FAILED, EventKind.RECLAIMED)


# Where a job made from a claimed row keeps its payload's JSON text until `payload` is read: the
# worker loop claims jobs, a handler thread validates their payloads, and decoding the text on
# the loop thread cost more than anything else of the claim's Python (`Job.payload_text`).
PAYLOAD_TEXT = "_payload_text"


# Not slotted: a job is made for every job claimed, and with a `__dict__` `from_fields` fills
# it in one call, where a frozen dataclass's `__init__` sets each of its 25 fields through
# `object.__setattr__`.
@dataclass(frozen=True)
class Job:
    id: int
    job_type: str
    payload: JsonObject
    status: JobStatus
    priority: int
    attempts: int
    max_attempts: int
    failure_count: int
    run_at: datetime
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    heartbeat_at: datetime | None = None
    cancel_requested_at: datetime | None = None
    locked_by: str | None = None
    result: Any = None
    last_error: str | None = None
    progress: JsonObject | None = None
    dedupe_key: str | None = None
    timeout_seconds: float | None = None
    queue: str = DEFAULT_QUEUE
    # At most `concurrency_limit` jobs with this key run at once (ADR 0052); None: no key.
    concurrency_key: str | None = None
    concurrency_limit: int | None = None
    # Each claim takes a token from this key's rate limiter, or the job waits (ADR 0053).
    rate_key: str | None = None

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> Job:
        """The job `Job(**fields)` would make, for a `fields` that names every field (no
        defaults are applied): equal to it, with the same hash, repr and `dataclasses.replace`.
        Made without `__init__`, for the claim (see the class comment): `fields` becomes the
        job's own state, not copied, so the caller hands over a dict it made for the job."""
        job = object.__new__(cls)
        object.__setattr__(job, "__dict__", fields)
        return job

    @property
    def payload_text(self) -> str | None:
        """The payload's JSON text as claimed, while nothing has read `payload`: a handler's
        payload model can validate it without the dict. None once `payload` was read, and for a
        job made with its payload's dict."""
        state = self.__dict__
        return None if "payload" in state else state.get(PAYLOAD_TEXT)

    @property
    def due_at(self) -> datetime:
        """When this attempt became due: its run_at (a retry's is its retry time), or its
        creation if later."""
        return max(self.run_at, self.created_at)

    def pickup_seconds(self, started_at: datetime | None) -> float | None:
        """How long after it became due an attempt started at `started_at` (None: not started)."""
        return None if started_at is None else (started_at - self.due_at).total_seconds()

    @property
    def claim(self) -> Claim:
        """The fence token of the attempt that is (or last was) running."""
        assert self.locked_by is not None, f"job {self.id} was never claimed"
        return Claim(job_id=self.id, worker_id=self.locked_by, attempt=self.attempts)


class _PayloadDecodedOnFirstRead:
    """`Job.payload` of a job made from a claimed row, which carries the payload's JSON text in
    its place (`PAYLOAD_TEXT`): decoded when first read and kept in the job's `__dict__`, where
    it hides this descriptor (one without `__set__`, as `functools.cached_property`) from then
    on. A job made with its dict never reaches this. Equality, repr, `dataclasses.replace` and
    `asdict` read `payload` as any caller does, so they see the dict."""

    def __get__(self, job: Job | None, owner: type[Job]) -> Any:
        if job is None:
            return self
        state = job.__dict__
        # setdefault: two threads reading it first both decode, and both get the dict kept.
        return state.setdefault("payload", json.loads(state[PAYLOAD_TEXT]))


# Set on the class after the dataclass is made: as the field's default it would give `payload`
# a default, and the fields after it none.
Job.payload = _PayloadDecodedOnFirstRead()  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class Claim:
    """Who runs which attempt of a job. Every write a worker makes about a running job is
    conditional on the row still carrying this claim, so a worker whose job was reclaimed
    cannot overwrite the newer attempt."""

    job_id: int
    worker_id: str
    attempt: int


@dataclass(frozen=True, slots=True)
class ClaimRequest:
    """What a worker asks to claim: up to `limit` due jobs of `job_types`, from `queues` (None:
    every queue). Paused queues are never claimed from."""

    worker_id: str
    job_types: Sequence[str]
    limit: int
    queues: Sequence[str] | None = None


# What a settle claims for: one request, several (one per queue share, in one transaction), or
# the older (worker_id, job_types, limit) of a worker that takes every queue.
ClaimFor = ClaimRequest | Sequence[ClaimRequest] | tuple[str, Sequence[str], int]


def claim_requests(claim_for: ClaimFor | None) -> list[ClaimRequest]:
    """`claim_for` as requests, the empty ones left out."""
    if claim_for is None:
        return []
    if isinstance(claim_for, ClaimRequest):
        requests = [claim_for]
    elif isinstance(claim_for, tuple) and len(claim_for) == 3 and isinstance(claim_for[0], str):
        worker_id, job_types, limit = claim_for
        requests = [ClaimRequest(worker_id, job_types, limit)]
    else:
        requests = [request for request in claim_for if isinstance(request, ClaimRequest)]
    return [
        request
        for request in requests
        if request.limit > 0 and request.job_types and request.queues != ()
    ]


class ClaimedJobs(list[Job]):
    """The jobs a claim took, in claim order, and when the jobs it handed back come due: those
    refused a token of their rate key (ADR 0053), which the claiming worker looks for again
    then rather than at its next regular poll."""

    def __init__(self, jobs: Iterable[Job] = (), held_until: Iterable[datetime] = ()) -> None:
        super().__init__(jobs)
        self.held_until = list(held_until)

    @classmethod
    def joined(cls, parts: Iterable[list[Job]]) -> ClaimedJobs:
        """The claims of several requests of one transaction as one."""
        joined = cls()
        for part in parts:
            joined.extend(part)
            joined.held_until.extend(held_until(part))
        return joined


def held_until(claimed: list[Job]) -> list[datetime]:
    """When the jobs a claim handed back come due (none for a plain list)."""
    return claimed.held_until if isinstance(claimed, ClaimedJobs) else []


# Not slotted, as `Job`: one is made for every job enqueued, and `from_fields` fills its
# `__dict__` in one call where the frozen `__init__` sets each of its 12 fields through
# `object.__setattr__`.
@dataclass(frozen=True)
class NewJob:
    """A validated job, ready to insert."""

    job_type: str
    payload: JsonObject
    priority: int
    max_attempts: int
    run_at: datetime
    dedupe_key: str | None = None
    timeout_seconds: float | None = None
    queue: str = DEFAULT_QUEUE
    concurrency_key: str | None = None
    concurrency_limit: int | None = None
    rate_key: str | None = None
    # `payload` as the JSON text stored, when validating it already wrote that text (the
    # enqueue then does not encode it again); None: encoded at insert. Set only by
    # `with_payload_document`: not an init field, so `dataclasses.replace` (with another
    # payload, say) leaves it out and never stores a stale text.
    payload_document: str | None = field(default=None, init=False, compare=False, repr=False)

    @property
    def payload_json(self) -> str:
        """The payload as the JSON text stored (`json.dumps`, the empty one spelled out)."""
        if self.payload_document is not None:
            return self.payload_document
        return json.dumps(self.payload) if self.payload else "{}"

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> NewJob:
        """The job `NewJob(**fields)` would make (then `with_payload_document` of the
        `payload_document` named), for a `fields` that names every field, `payload_document`
        included: equal to it, with the same repr and `dataclasses.replace`. `fields` becomes
        the job's own state, not copied."""
        job = object.__new__(cls)
        object.__setattr__(job, "__dict__", fields)
        return job

    def with_payload_document(self, document: str) -> NewJob:
        """This job, carrying `document`: `json.dumps(self.payload)`, already written."""
        object.__setattr__(self, "payload_document", document)  # frozen: set once, at build
        return self


class JobsAlike(Sequence[NewJob]):
    """Jobs alike in everything but their payloads: each is `template` with the payload at its
    index in `payloads`, stored as the text at the same index in `documents` (the template's
    own payload is none of theirs). A batch of one type that leaves every option to the type
    is such a run; a backend may insert it with the shared values bound once. To anything else
    it is the sequence of those jobs, built on first use."""

    __slots__ = ("_jobs", "documents", "payloads", "template")

    def __init__(self, template: NewJob, payloads: list[JsonObject], documents: list[str]) -> None:
        if len(payloads) != len(documents):
            raise ValueError("one stored text per payload")
        self.template = template
        self.payloads = payloads
        self.documents = documents
        self._jobs: list[NewJob] | None = None

    def __len__(self) -> int:
        return len(self.documents)

    @overload
    def __getitem__(self, index: int) -> NewJob: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[NewJob]: ...

    def __getitem__(self, index: int | slice) -> NewJob | Sequence[NewJob]:
        return self._built()[index]

    def __iter__(self) -> Iterator[NewJob]:
        return iter(self._built())

    def _built(self) -> list[NewJob]:
        if self._jobs is None:
            shared = self.template.__dict__
            self._jobs = [
                NewJob.from_fields({**shared, "payload": payload, "payload_document": document})
                for payload, document in zip(self.payloads, self.documents, strict=True)
            ]
        return self._jobs


@dataclass(frozen=True, slots=True)
class EnqueueResult:
    job_id: int
    created: bool  # False when an active job with the same dedupe key was returned instead

    @classmethod
    def all_created(cls, job_ids: Sequence[int]) -> list[EnqueueResult]:
        """`[EnqueueResult(job_id, True) for job_id in job_ids]`, each slot filled in one pass
        in C: the frozen dataclass's `__init__` (a Python call setting each field through
        `object.__setattr__`) cost a batched enqueue as much per job as all its Python else."""
        results: list[EnqueueResult] = list(map(object.__new__, repeat(cls, len(job_ids))))
        slots = vars(cls)
        deque(map(slots["job_id"].__set__, results, job_ids), maxlen=0)
        deque(map(slots["created"].__set__, results, repeat(True)), maxlen=0)
        return results


@dataclass(frozen=True, slots=True)
class JobEvent:
    id: int
    job_id: int
    kind: EventKind
    at: datetime
    attempt: int | None = None
    worker_id: str | None = None
    message: str | None = None
    details: JsonObject | None = None


@dataclass(frozen=True, slots=True)
class AttemptError:
    attempt: int | None
    message: str
    traceback: str | None
    at: datetime


@dataclass(frozen=True, slots=True)
class DeadLetterEntry:
    id: int
    job_id: int
    job_type: str
    payload: JsonObject
    attempts: int
    errors: list[AttemptError]
    last_error: str | None
    failed_at: datetime
    requeued_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    id: str
    hostname: str
    pid: int
    concurrency: int
    job_types: list[str]
    started_at: datetime
    last_seen_at: datetime
    stopped_at: datetime | None = None
    # The lock this worker's death releases ("advisory", "flock"), or None if it holds none.
    liveness_lock: str | None = None


@dataclass(frozen=True, slots=True)
class QueueState:
    """A named queue: whether it is paused, and its active jobs."""

    name: str
    paused: bool
    paused_at: datetime | None
    pending: int
    running: int


@dataclass(frozen=True, slots=True)
class QueueStats:
    by_status: dict[str, int]
    by_type: dict[str, dict[str, int]]
    dead_letter: int
    # Since the oldest pending job was created, scheduled and backing-off jobs included.
    oldest_pending_age_seconds: float | None
    workers_alive: int
    # The queue's latency: how long the longest-waiting *due* pending job has waited since it
    # became due (its run_at, or its creation if later); None when no pending job is due.
    latency_seconds: float | None = None
    # Per named queue: paused or not, pending and running jobs.
    queues: list[QueueState] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class OutcomeBase:
    """What every outcome carries: the attempt it ends and, for the metrics and the job row,
    the progress not yet written, the job's type, how long the attempt ran and how long after
    it became due it started."""

    claim: Claim
    _: KW_ONLY
    progress: JsonObject | None = None
    job_type: str = ""
    duration_seconds: float | None = None
    pickup_seconds: float | None = None


@dataclass(frozen=True, slots=True)
class Completed(OutcomeBase):
    """The handler returned `result`."""

    result: Any = None


@dataclass(frozen=True, slots=True)
class Failed(OutcomeBase):
    """The handler raised (or timed out). Retried at `retry_at` (None: at once) while attempts
    remain, unless `permanent` (a PermanentJobError: retrying cannot help). A worker always sets
    `retry_at` from the job type's retry policy; None is for other callers of the store."""

    error: str
    retry_at: datetime | None = None
    traceback: str | None = None
    permanent: bool = False


@dataclass(frozen=True, slots=True)
class Cancelled(OutcomeBase):
    """A user's cancel request was honoured (or ignored by the handler; same result).
    `result_dropped`: the handler returned a result anyway, which is not kept."""

    result_dropped: bool = False


@dataclass(frozen=True, slots=True)
class Interrupted(OutcomeBase):
    """Stopped by worker shutdown. `requeue` puts the job back to pending without spending the
    attempt; otherwise it is cancelled."""

    requeue: bool = False


@dataclass(frozen=True, slots=True)
class Returned(OutcomeBase):
    """A job claimed ahead of free slots, handed back before its handler started (ADR 0033): at
    shutdown, or after waiting too long behind slow handlers. Back to pending; the attempt is
    not spent. `why` goes into the job's events."""

    why: str


@dataclass(frozen=True, slots=True)
class Snoozed(OutcomeBase):
    """The handler raised Snooze: back to pending, due at `run_at`; the attempt is not spent and
    no error is recorded (ADR 0050)."""

    run_at: datetime
    seconds: float = 0.0
    # The rate-limit key whose pause it waits out (RateLimited): `keys resume` brings it forward.
    rate_key: str | None = None


# How one attempt ended, as the owning worker reports it to the store.
AttemptOutcome = Completed | Failed | Cancelled | Interrupted | Returned | Snoozed


@dataclass(frozen=True, slots=True)
class ReclaimedJob:
    job_id: int
    job_type: str
    from_worker: str | None
    attempt: int
    dead_lettered: bool
    retry_at: datetime  # when it is due again (unless dead-lettered)


@dataclass(frozen=True, slots=True)
class DeadLetteredJob:
    """Told to a worker's `on_dead_letter` hook after the job's dead-letter entry is committed."""

    job_id: int
    job_type: str
    attempts: int
    max_attempts: int | None  # None when a reaper dead-lettered it (the row was not read)
    error: str
    permanent: bool  # the handler raised PermanentJobError (not retried)
    reclaimed: bool  # its worker went silent on the last attempt (a reaper took it back)
    at: datetime
