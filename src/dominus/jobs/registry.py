"""The handler registry: job type → handler, payload model and defaults."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from dominus.errors import DuplicateJobTypeError, NotEnqueueableError, UnknownJobTypeError
from dominus.jobs.concurrency import check_concurrency_limit
from dominus.jobs.context import JobContext
from dominus.jobs.model import DEFAULT_QUEUE, JsonObject
from dominus.jobs.payload_text import validates_text_as_dict
from dominus.jobs.queues import check_queue_name
from dominus.jobs.retry import RetryPolicy

PayloadT = TypeVar("PayloadT", bound=BaseModel)
SyncHandler = Callable[[PayloadT, JobContext], Any]
# An `async def` handler: the worker runs it on its event loop thread, not on a thread of its own
# (ADR 0029).
AsyncHandler = Callable[[PayloadT, JobContext], Coroutine[Any, Any, Any]]
Handler = SyncHandler[PayloadT] | AsyncHandler[PayloadT]
# A job type's default concurrency key, from the job's validated payload (None: no key).
ConcurrencyKeyOf = Callable[[JsonObject], str | None]

DEFAULT_MAX_ATTEMPTS = 3


@dataclass(frozen=True)
class JobType(Generic[PayloadT]):
    """A registered job type and its defaults (each can be overridden per job at enqueue)."""

    name: str
    handler: Handler[PayloadT]
    payload_model: type[PayloadT]
    priority: int = 0
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    timeout_seconds: float | None = None
    # None: the worker's default policy (JOB_RETRY_BASE_MS / JOB_RETRY_MAX_MS).
    retry_policy: RetryPolicy | None = None
    # None: a public type, which any caller may enqueue (`POST /jobs`, `dominus enqueue`).
    # Otherwise the type is internal: its jobs belong to something else (a row that must exist
    # first, in the same transaction), so only that owner enqueues them, and this says what a
    # caller should use instead ("POST /api/v1/runs or `dominus run`").
    enqueue_via: str | None = None
    # The named queue its jobs go to unless the caller names another (schedules included).
    queue: str = DEFAULT_QUEUE
    # The concurrency key of its jobs unless the caller names one (ADR 0052), and that key's
    # limit unless the caller or CONCURRENCY_LIMITS gives one.
    concurrency_key: ConcurrencyKeyOf | None = None
    concurrency_limit: int | None = None
    # Whether `handler` is an `async def` function; worked out once, at registration.
    is_async: bool = field(init=False, repr=False, compare=False)
    # Whether `payload_model` validates a claimed job's payload text as it would the decoded
    # dict (`validates_text_as_dict`); worked out once, at registration.
    reads_payload_text: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # object.__setattr__: the dataclass is frozen; these fields are derived, never passed.
        object.__setattr__(self, "is_async", inspect.iscoroutinefunction(self.handler))
        object.__setattr__(self, "reads_payload_text", validates_text_as_dict(self.payload_model))

    @property
    def public(self) -> bool:
        return self.enqueue_via is None

    def check_enqueueable(self, where: str = "") -> None:
        """Raise NotEnqueueableError for an internal type (a generic caller is asking)."""
        if self.enqueue_via is not None:
            raise NotEnqueueableError(
                f"{where}job type {self.name!r} cannot be enqueued directly; use {self.enqueue_via}"
            )


class HandlerRegistry:
    def __init__(self, job_types: Iterable[JobType[Any]] = ()) -> None:
        self._types: dict[str, JobType[Any]] = {}
        for job_type in job_types:
            self.add(job_type)

    def add(self, job_type: JobType[Any]) -> None:
        if job_type.name in self._types:
            raise DuplicateJobTypeError(f"job type {job_type.name!r} is already registered")
        if job_type.max_attempts < 1:
            raise ValueError(f"job type {job_type.name!r}: max_attempts must be at least 1")
        check_queue_name(job_type.queue, f"job type {job_type.name!r}: ")
        if job_type.concurrency_limit is not None:
            check_concurrency_limit(job_type.concurrency_limit, f"job type {job_type.name!r}: ")
        self._types[job_type.name] = job_type

    def register(
        self,
        name: str,
        handler: Handler[PayloadT],
        payload_model: type[PayloadT],
        *,
        priority: int = 0,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        timeout_seconds: float | None = None,
        retry_policy: RetryPolicy | None = None,
        enqueue_via: str | None = None,
        queue: str = DEFAULT_QUEUE,
        concurrency_key: ConcurrencyKeyOf | None = None,
        concurrency_limit: int | None = None,
    ) -> JobType[PayloadT]:
        job_type = JobType(
            name=name,
            handler=handler,
            payload_model=payload_model,
            priority=priority,
            max_attempts=max_attempts,
            timeout_seconds=timeout_seconds,
            retry_policy=retry_policy,
            enqueue_via=enqueue_via,
            queue=queue,
            concurrency_key=concurrency_key,
            concurrency_limit=concurrency_limit,
        )
        self.add(job_type)
        return job_type

    def get(self, name: str) -> JobType[Any]:
        try:
            return self._types[name]
        except KeyError:
            known = ", ".join(sorted(self._types)) or "none"
            raise UnknownJobTypeError(f"unknown job type {name!r} (registered: {known})") from None

    def names(self) -> list[str]:
        return sorted(self._types)

    def restricted_to(self, names: Iterable[str]) -> HandlerRegistry:
        """A registry with only `names` (each must be registered here)."""
        return HandlerRegistry(self.get(name) for name in names)

    def __contains__(self, name: object) -> bool:
        return name in self._types

    def __iter__(self) -> Iterator[JobType[Any]]:
        return iter(self._types.values())

    def __len__(self) -> int:
        return len(self._types)
