"""The caller's side of the engine: validate and enqueue jobs, cancel and retry them.

Validation happens before anything is written: an unknown job type, a payload that fails the
type's pydantic model or an option out of range raises, naming the field, and the whole batch
is refused. So does an internal job type (`JobType.enqueue_via`) unless the caller says it is
that type's owner (`internal=True`): the generic paths (API, CLI) never do.
"""

from __future__ import annotations

import functools
import itertools
import json
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import (
    BaseModel,
    PydanticUndefinedAnnotation,
    PydanticUserError,
    TypeAdapter,
    ValidationError,
)
from sqlalchemy import Connection

from dominus.errors import (
    InvalidJobOptionError,
    InvalidPayloadError,
    NotEnqueueableError,
    UnknownJobTypeError,
)
from dominus.jobs.clock import utc_now
from dominus.jobs.concurrency import NO_LIMITS, ConcurrencyLimits, resolve_concurrency
from dominus.jobs.json_limits import (
    MAX_JSON_DEPTH,
    MAX_PAYLOAD_BYTES,
    too_big_message,
    too_deep_message,
    value_nests_deeper_than,
)
from dominus.jobs.model import EnqueueResult, Job, JobsAlike, JsonObject, NewJob, QueueState
from dominus.jobs.queues import check_queue_name
from dominus.jobs.rate_limit import check_rate_key
from dominus.jobs.registry import HandlerRegistry, JobType
from dominus.jobs.selection import BulkAction, BulkOutcome
from dominus.jobs.store import JobStore

PRIORITY_RANGE = (-1000, 1000)
NO_NUL = "cannot contain the NUL character (\\u0000)"
MAX_ATTEMPTS_RANGE = (1, 1000)
DEDUPE_KEY_MAX_LENGTH = 300
MAX_TIMEOUT_SECONDS = 7 * 86_400
# A job's priority, max_attempts, timeout and queue.
_Options = tuple[int, int, float | None, str]


@dataclass(frozen=True, init=False)
class EnqueueRequest:
    """One job to enqueue; None means "the job type's default"."""

    job_type: str
    payload: dict[str, Any] | BaseModel | None = None
    priority: int | None = None
    max_attempts: int | None = None
    run_at: datetime | None = None
    dedupe_key: str | None = None
    timeout_seconds: float | None = None
    # None: the job type's queue (`default` unless its registration names another).
    queue: str | None = None
    # None: the job type's key (most have none). The limit: None takes CONCURRENCY_LIMITS'
    # longest matching prefix, else the registration's, else 1 (ADR 0052).
    concurrency_key: str | None = None
    concurrency_limit: int | None = None
    # Each claim of the job takes a token from this limiter (RATE_LIMITS; a key with no limit
    # configured is unlimited), or the job waits for one without spending an attempt.
    rate_key: str | None = None

    def __init__(
        self,
        job_type: str,
        payload: dict[str, Any] | BaseModel | None = None,
        priority: int | None = None,
        max_attempts: int | None = None,
        run_at: datetime | None = None,
        dedupe_key: str | None = None,
        timeout_seconds: float | None = None,
        queue: str | None = None,
        concurrency_key: str | None = None,
        concurrency_limit: int | None = None,
        rate_key: str | None = None,
    ) -> None:
        # The frozen dataclass's own __init__, which sets each field through
        # `object.__setattr__`, cost more than building the job from the request; this one sets
        # the instance's dict whole (the same fields, parameters and defaults: tested).
        object.__setattr__(
            self,
            "__dict__",
            {
                "job_type": job_type,
                "payload": payload,
                "priority": priority,
                "max_attempts": max_attempts,
                "run_at": run_at,
                "dedupe_key": dedupe_key,
                "timeout_seconds": timeout_seconds,
                "queue": queue,
                "concurrency_key": concurrency_key,
                "concurrency_limit": concurrency_limit,
                "rate_key": rate_key,
            },
        )


@dataclass
class JobQueue:
    """Enqueue and manage jobs. Thread-safe; share one per process."""

    store: JobStore
    registry: HandlerRegistry
    max_depth: int = 0
    clock: Callable[[], datetime] = utc_now
    # The operator's limits by key prefix (CONCURRENCY_LIMITS).
    concurrency_limits: ConcurrencyLimits = NO_LIMITS
    _listeners: list[Callable[[], None]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    # Each job type's own options, once checked, by name (with the type they were read from).
    _type_options: dict[str, tuple[JobType[Any], _Options]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def subscribe(self, listener: Callable[[], None]) -> None:
        """Call `listener()` after each enqueue (a worker in this process wakes at once)."""
        with self._lock:
            self._listeners.append(listener)

    def enqueue_job(
        self,
        job_type: str,
        payload: dict[str, Any] | BaseModel | None = None,
        *,
        priority: int | None = None,
        max_attempts: int | None = None,
        run_at: datetime | None = None,
        dedupe_key: str | None = None,
        timeout_seconds: float | None = None,
        queue: str | None = None,
        concurrency_key: str | None = None,
        concurrency_limit: int | None = None,
        rate_key: str | None = None,
        connection: Connection | None = None,
        internal: bool = False,
    ) -> EnqueueResult:
        """Enqueue one job. With `connection`, the insert joins the caller's transaction;
        `internal=True` is for the owner of an internal job type (see JobType.enqueue_via)."""
        # The batch's path for one job, without the batch's bookkeeping (the hot path of a
        # producer enqueueing one job at a time).
        now = self.clock()
        if (
            priority is None
            and max_attempts is None
            and run_at is None
            and dedupe_key is None
            and timeout_seconds is None
            and queue is None
            and concurrency_key is None
            and concurrency_limit is None
            and rate_key is None
        ):
            job = self._build_with_type_options(job_type, payload, now, internal)
        else:
            request = EnqueueRequest(
                job_type,
                payload,
                priority,
                max_attempts,
                run_at,
                dedupe_key,
                timeout_seconds,
                queue,
                concurrency_key,
                concurrency_limit,
                rate_key,
            )
            job = self.build(request, now, internal=internal)
        result = self.store.enqueue([job], now, max_depth=self.max_depth, connection=connection)
        self._notify()
        return result[0]

    def enqueue_jobs(
        self,
        requests: Iterable[EnqueueRequest],
        *,
        connection: Connection | None = None,
        internal: bool = False,
    ) -> list[EnqueueResult]:
        """Enqueue a batch atomically: all jobs or, if any is invalid, none."""
        now = self.clock()
        batch = list(requests)
        jobs: Sequence[NewJob] | None = self._build_flat_batch(batch, now, internal)
        if jobs is None:
            numbered = len(batch) > 1
            jobs = [
                self._build_request(request, now, f"job #{number}: " if numbered else "", internal)
                for number, request in enumerate(batch, 1)
            ]
        results = self.store.enqueue(jobs, now, max_depth=self.max_depth, connection=connection)
        self._notify()
        return results

    def _build_flat_batch(
        self, batch: list[EnqueueRequest], now: datetime, internal: bool
    ) -> JobsAlike | None:
        """The jobs of a batch of one type's flat payloads with no options, their payloads
        validated in one call of pydantic's; None when the batch is not that or anything in it
        fails (the job-by-job path then builds it, or raises what it raises, and where)."""
        if len(batch) < 2 or not all(_takes_type_options(request) for request in batch):
            return None
        name = batch[0].job_type
        if any(request.job_type != name for request in batch):
            return None
        try:
            job_type = self.registry.get(name)
            if not internal:
                job_type.check_enqueueable()
            if job_type.concurrency_key is not None:
                return None  # a key read from each payload, by the type's own code
            options = self._checked_type_options(job_type, "job #1: ")
        except (UnknownJobTypeError, NotEnqueueableError, InvalidJobOptionError):
            return None
        validated = _validated_flat_batch(job_type.payload_model, batch)
        if validated is None:
            return None
        payloads, documents = validated
        # The jobs share all but their payloads: the template's payload is none of theirs.
        template = _job_by_type_options(name, {}, "{}", now, options, (None, None))
        return JobsAlike(template, payloads, documents)

    def _build_request(
        self, request: EnqueueRequest, now: datetime, where: str, internal: bool
    ) -> NewJob:
        """`build`, by the type's checked options when the request leaves them all to it."""
        if _takes_type_options(request):
            return self._build_with_type_options(
                request.job_type, request.payload, now, internal, where
            )
        return self.build(request, now, where, internal=internal)

    def build(
        self, request: EnqueueRequest, now: datetime, where: str = "", *, internal: bool = False
    ) -> NewJob:
        """Validate one request into a row-ready job (raises; writes nothing). `where` prefixes
        error messages, e.g. "line 7: "."""
        job_type = self.registry.get(request.job_type)
        if not internal:
            job_type.check_enqueueable(where)
        payload, document = _validated_payload(
            job_type.payload_model, request.payload, where + job_type.name
        )
        priority = job_type.priority if request.priority is None else request.priority
        max_attempts = (
            job_type.max_attempts if request.max_attempts is None else request.max_attempts
        )
        timeout = (
            job_type.timeout_seconds if request.timeout_seconds is None else request.timeout_seconds
        )
        _check_options(where, priority, max_attempts, timeout)
        run_at = now if request.run_at is None else _utc(request.run_at, where)
        queue = check_queue_name(job_type.queue if request.queue is None else request.queue, where)
        key, limit = self._concurrency(
            job_type, request.concurrency_key, request.concurrency_limit, payload, where
        )
        rate_key = None if request.rate_key is None else check_rate_key(request.rate_key, where)
        if (
            request.dedupe_key is not None
            and not 0 < len(request.dedupe_key) <= DEDUPE_KEY_MAX_LENGTH
        ):
            raise InvalidJobOptionError(
                f"{where}dedupe_key must be 1 to {DEDUPE_KEY_MAX_LENGTH} characters"
            )
        if request.dedupe_key is not None and "\x00" in request.dedupe_key:
            raise InvalidJobOptionError(f"{where}dedupe_key {NO_NUL}")
        if request.dedupe_key is not None and not is_text(request.dedupe_key):
            raise InvalidJobOptionError(
                f"{where}dedupe_key is not UTF-8 text: {request.dedupe_key!r}"
            )
        return NewJob.from_fields(
            {
                "job_type": request.job_type,
                "payload": payload,
                "priority": priority,
                "max_attempts": max_attempts,
                "run_at": run_at,
                "dedupe_key": request.dedupe_key,
                "timeout_seconds": timeout,
                "queue": queue,
                "concurrency_key": key,
                "concurrency_limit": limit,
                "rate_key": rate_key,
                "payload_document": document,
            }
        )

    def _build_with_type_options(
        self,
        name: str,
        payload: dict[str, Any] | BaseModel | None,
        now: datetime,
        internal: bool,
        where: str = "",
    ) -> NewJob:
        """`build` of a request that names its type and payload and leaves every option to the
        type: the same checks in the same order, the same job and errors; the type's options
        are checked once, not for every job."""
        job_type = self.registry.get(name)
        if not internal:
            job_type.check_enqueueable(where)
        document_payload, document = _validated_payload(
            job_type.payload_model, payload, where + job_type.name if where else job_type.name
        )
        options = self._checked_type_options(job_type, where)
        concurrency = self._concurrency(job_type, None, None, document_payload, where)
        return _job_by_type_options(name, document_payload, document, now, options, concurrency)

    def _checked_type_options(self, job_type: JobType[Any], where: str = "") -> _Options:
        """The type's own priority, max_attempts, timeout and queue, checked as `build` checks
        them (raises as it would, every time: a failed check is not kept)."""
        known = self._type_options.get(job_type.name)
        if known is not None and known[0] is job_type:  # a registry's types never change
            return known[1]
        _check_options(where, job_type.priority, job_type.max_attempts, job_type.timeout_seconds)
        options = (
            job_type.priority,
            job_type.max_attempts,
            job_type.timeout_seconds,
            check_queue_name(job_type.queue, where),
        )
        self._type_options[job_type.name] = (job_type, options)
        return options

    def _concurrency(
        self,
        job_type: JobType[Any],
        key: str | None,
        limit: int | None,
        payload: JsonObject,
        where: str,
    ) -> tuple[str | None, int | None]:
        if key is None and limit is None and job_type.concurrency_key is None:
            return None, None  # what `resolve_concurrency` says of no key and no limit
        default_limit = None
        if key is None and job_type.concurrency_key is not None:
            key = job_type.concurrency_key(payload)
            default_limit = job_type.concurrency_limit
        return resolve_concurrency(
            key,
            limit,
            default_limit=default_limit,
            limits=self.concurrency_limits,
            where=where,
        )

    def get(self, job_id: int) -> Job:
        return self.store.get_job(job_id)

    def cancel(self, job_id: int) -> Job:
        job = self.store.request_cancel(job_id, self.clock())
        self._notify()
        return job

    def retry(self, job_id: int) -> Job:
        job = self.store.retry_job(job_id, self.clock())
        self._notify()
        return job

    def bulk(self, action: BulkAction, ids: Sequence[int]) -> BulkOutcome:
        """`action` (retry, cancel, delete) on each of `ids`: see `JobStore.bulk`."""
        outcome = self.store.bulk(action, ids, self.clock())
        if action is not BulkAction.DELETE and outcome.done:
            self._notify()
        return outcome

    def requeue_dead_letter(self, entry_id: int) -> Job:
        job = self.store.requeue_dead_letter(entry_id, self.clock())
        self._notify()
        return job

    def pause(self, name: str) -> QueueState:
        """Pause the queue `name` (it need not exist yet): from now on no worker on any host
        claims its jobs; running ones finish. Raises InvalidJobOptionError for a bad name."""
        return self.store.pause_queue(check_queue_name(name), self.clock())

    def resume(self, name: str) -> QueueState:
        """Resume the queue `name`: its due jobs are claimed again (local workers are woken)."""
        state = self.store.resume_queue(check_queue_name(name), self.clock())
        self._notify()
        return state

    def queues(self) -> list[QueueState]:
        return self.store.list_queues()

    def _notify(self) -> None:
        for listener in tuple(self._listeners):
            listener()


def _validated_payload(
    model: type[BaseModel], payload: dict[str, Any] | BaseModel | None, job_type: str
) -> tuple[dict[str, Any], str]:
    """The payload as validated and dumped by `model`, and the JSON text stored for it."""
    if payload is None or (isinstance(payload, dict) and not payload):
        default = _default_payload_document(model)
        if default is not None:  # a fresh copy: callers may keep and change what they get
            loaded: dict[str, Any] = json.loads(default)
            return loaded, default
    if isinstance(payload, BaseModel):
        payload = payload.model_dump(mode="json")
    # Payloads are stored as JSON, so they are validated as JSON, strictly: `"3"` or `true` is
    # not a number of seconds (lax mode would take them), whoever enqueues (API, CLI, code).
    flat = _flat_json_ready(payload)
    try:
        ready = flat if flat is not None else _json_ready(payload, job_type)
        document = _flat_json(flat) if flat is not None else _strict_json(ready)
    except (TypeError, ValueError) as error:
        raise InvalidPayloadError(f"invalid payload for {job_type}: {error}") from None
    if len(document) > MAX_PAYLOAD_BYTES:  # ASCII (ensure_ascii): characters are bytes
        raise InvalidPayloadError(
            f"invalid payload for {job_type}: {too_big_message('it', len(document))}"
        )
    try:
        dumped = _validated_and_dumped(model, document)
    except ValidationError as error:
        raise InvalidPayloadError(_describe_payload_error(job_type, error)) from None
    # Encoding the payload again costs as much as validating it: when the model gave back what
    # it was sent, the text it was sent is the text `json.dumps` would write.
    stored = document if flat is not None and _same_flat_json(dumped, flat) else json.dumps(dumped)
    # The encoder writes a NUL as `\u0000` (ensure_ascii), so text without that has none; with
    # it (or a backslash before `u0000`), the walk decides.
    if "\\u0000" in stored and _holds_nul(dumped):
        raise InvalidPayloadError(f"invalid payload for {job_type}: strings {NO_NUL}")
    return dumped, stored


def _validated_and_dumped(model: type[BaseModel], document: str) -> dict[str, Any]:
    """`model.model_validate_json(document, strict=True).model_dump(mode="json")`, calling
    pydantic's validator and serializer directly when those two methods are BaseModel's own:
    the methods only pass their arguments on, at the cost of half the call."""
    if not _has_own_json_methods(model):
        validated = model.__pydantic_validator__.validate_json(document, strict=True)
        if type(validated) is model:
            dumped: dict[str, Any] = validated.__pydantic_serializer__.to_python(
                validated, mode="json"
            )
            return dumped
        return validated.model_dump(mode="json")  # type: ignore[no-any-return]
    return model.model_validate_json(document, strict=True).model_dump(mode="json")


def _job_by_type_options(
    name: str,
    payload: dict[str, Any],
    document: str,
    now: datetime,
    options: _Options,
    concurrency: tuple[str | None, int | None],
) -> NewJob:
    """The job of a request that leaves every option to its type: `options` the type's checked
    ones, `concurrency` its key and limit, `document` the payload's stored text."""
    priority, max_attempts, timeout, queue = options
    key, limit = concurrency
    return NewJob.from_fields(
        {
            "job_type": name,
            "payload": payload,
            "priority": priority,
            "max_attempts": max_attempts,
            "run_at": now,
            "dedupe_key": None,
            "timeout_seconds": timeout,
            "queue": queue,
            "concurrency_key": key,
            "concurrency_limit": limit,
            "rate_key": None,
            "payload_document": document,
        }
    )


def _takes_type_options(request: EnqueueRequest) -> bool:
    """Whether `request` sets no option, leaving them all to its job type."""
    return (
        request.priority is None
        and request.max_attempts is None
        and request.run_at is None
        and request.dedupe_key is None
        and request.timeout_seconds is None
        and request.queue is None
        and request.concurrency_key is None
        and request.concurrency_limit is None
        and request.rate_key is None
    )


def _validated_flat_batch(
    model: type[BaseModel], batch: list[EnqueueRequest]
) -> tuple[list[dict[str, Any]], list[str]] | None:
    """What `_validated_payload` gives for each request's payload (the payloads, then their
    texts), when every one is a
    non-empty flat payload (`_flat_json_ready`), validated as one JSON array and dumped in one
    call: each call of pydantic's costs as much as the work it does on a small payload. None
    when any payload is not flat or fails anything (the job-by-job path then says which)."""
    encoded = None if _has_own_json_methods(model) else _flat_documents(batch)
    if encoded is None:
        return None
    flats, documents = encoded
    # The documents as `_strict_json` writes their list: the text of each is its item's.
    text = "[" + _STRICT_ENCODER.item_separator.join(documents) + "]"
    try:
        adapter = _list_adapter(model)
    except (PydanticUserError, PydanticUndefinedAnnotation):
        return None  # a model pydantic cannot build yet: the job-by-job path says so
    try:
        validated = adapter.validate_json(text, strict=True)
    except ValidationError:
        return None
    # The list's serializer dumps each item by the model's schema; a validator that returned
    # another type (a subclass) would be dumped by its own `model_dump` one by one.
    if any(type(item) is not model for item in validated):
        return None
    dumped: list[dict[str, Any]] = adapter.dump_python(validated, mode="json")
    if _same_flat_jsons(dumped, flats) and "\\u0000" not in text:
        return dumped, documents
    return _stored_flat_batch(dumped, flats, documents)


def _flat_documents(
    batch: list[EnqueueRequest],
) -> tuple[list[dict[str, Any]], list[str]] | None:
    """Each request's payload made ready (`_flat_json_ready`) and encoded, as
    `_validated_payload` does; None when one is not a non-empty flat payload, cannot be
    encoded or is too big."""
    flats = []
    documents = []
    for request in batch:
        flat = _flat_json_ready(request.payload) if request.payload else None
        if flat is None:
            return None
        try:
            document = _flat_json(flat)
        except (TypeError, ValueError):
            return None
        if len(document) > MAX_PAYLOAD_BYTES:
            return None
        flats.append(flat)
        documents.append(document)
    return flats, documents


def _stored_flat_batch(
    dumped: list[dict[str, Any]], flats: list[dict[str, Any]], documents: list[str]
) -> tuple[list[dict[str, Any]], list[str]] | None:
    """The payloads as dumped, and the text `_validated_payload` stores for each; None when one
    holds a NUL."""
    stored_texts = []
    for payload, flat, document in zip(dumped, flats, documents, strict=True):
        stored = document if _same_flat_json(payload, flat) else json.dumps(payload)
        if "\\u0000" in stored and _holds_nul(payload):
            return None
        stored_texts.append(stored)
    return dumped, stored_texts


@functools.cache
def _list_adapter(model: type[BaseModel]) -> TypeAdapter[list[Any]]:
    """A list of `model`s, validated and dumped by the model's own schema."""
    return TypeAdapter(list[model])  # type: ignore[valid-type]


@functools.cache
def _has_own_json_methods(model: type[BaseModel]) -> bool:
    """Whether `model` (or a base of it) defines its own `model_validate_json` or
    `model_dump`."""
    return (
        getattr(model.model_validate_json, "__func__", None)
        is not getattr(BaseModel.model_validate_json, "__func__", None)
        or model.model_dump is not BaseModel.model_dump
    )


# `json.dumps(value, allow_nan=False)` without building an encoder on every call.
_STRICT_ENCODER = json.JSONEncoder(allow_nan=False)
_strict_json = _STRICT_ENCODER.encode
# What `_strict_json` builds on every call, built once for flat payloads (`_flat_json_ready`):
# the C encoder, less its check for circular references (the markers, the one state it keeps
# while encoding), which a value of a flat payload cannot make: none holds another.
_c_make_encoder: Any = getattr(json.encoder, "c_make_encoder", None)
_flat_encoder: Any = (
    None
    if _c_make_encoder is None  # an interpreter without the C encoder
    else _c_make_encoder(
        None,  # markers
        _STRICT_ENCODER.default,
        json.encoder.encode_basestring_ascii,  # ensure_ascii
        None,  # indent
        _STRICT_ENCODER.key_separator,
        _STRICT_ENCODER.item_separator,
        _STRICT_ENCODER.sort_keys,
        _STRICT_ENCODER.skipkeys,
        _STRICT_ENCODER.allow_nan,
    )
)
# The JSON scalars a payload's values most often are: exactly these types (no subclass, such as
# an enum, which the general path handles).
_SCALARS = frozenset({str, int, bool, type(None)})


def _flat_json(flat: dict[str, Any]) -> str:
    """`_strict_json(flat)` of a flat payload."""
    if _flat_encoder is None:
        return _strict_json(flat)
    return "".join(_flat_encoder(flat, 0))


def _json_ready(payload: Any, job_type: str) -> Any:
    """`payload` as it is validated: integral floats as ints (`integral_floats_as_ints`).
    Raises InvalidPayloadError when it nests too deep, checked before anything walks it
    recursively; ValueError or TypeError for what JSON cannot hold (left to the encoder).
    A flat payload is made ready by `_flat_json_ready`, the same for less."""
    if value_nests_deeper_than(payload):
        raise InvalidPayloadError(f"invalid payload for {job_type}: {too_deep_message('it')}")
    return integral_floats_as_ints(payload or {})


def _flat_json_ready(payload: Any) -> dict[str, Any] | None:
    """The common payload, a dict of text keys to scalars, made ready in one pass: the same
    result as `integral_floats_as_ints`, and it cannot nest too deep. None for anything else.
    Without an integral float that is `payload` itself (only encoded and compared, never
    changed), otherwise a copy."""
    if type(payload) is not dict:
        return None
    ready: dict[str, Any] = payload
    for key, value in payload.items():
        kind = type(value)
        if type(key) is not str:
            return None
        if kind is float:
            if value.is_integer():
                if ready is payload:
                    ready = dict(payload)  # same keys, same order: each replaced in place
                ready[key] = int(value)
        elif kind not in _SCALARS:
            return None
    return ready


def _same_flat_json(dumped: dict[str, Any], flat: dict[str, Any]) -> bool:
    """Whether `json.dumps(dumped)` writes the text the flat payload `flat` (text keys, scalar
    values: `_flat_json_ready`) was encoded to: `dumped` has the same keys in the same order,
    each value of the same type and equal. The types matter: `1 == 1.0 == True`, spelled `1`,
    `1.0`, `true`; two equal floats are one number, one text (`flat` holds no zero float, where
    `0.0 == -0.0`: an integral float is an int there, and no NaN: the strict encoder refused
    it). A nested payload takes the general path, where `==` cannot tell `1` from `1.0` inside."""
    return (
        dumped == flat
        and list(dumped) == list(flat)
        and list(map(type, dumped.values())) == list(map(type, flat.values()))
    )


def _same_flat_jsons(dumped: list[dict[str, Any]], flats: list[dict[str, Any]]) -> bool:
    """`_same_flat_json` of each pair, in a few passes over the whole batch: equal dicts have
    as many keys each, so equal runs of all their keys (and of all their values' types) are
    equal key by key, dict by dict."""
    chain = itertools.chain.from_iterable
    return (
        dumped == flats
        and [*chain(dumped)] == [*chain(flats)]
        and [*map(type, chain(map(dict.values, dumped)))]
        == [*map(type, chain(map(dict.values, flats)))]
    )


@functools.cache
def _default_payload_document(model: type[BaseModel]) -> str | None:
    """The stored document of "no payload" for `model`, worked out once, when that is the same
    every time: most jobs of a kind are enqueued without one (the maintenance jobs, a benchmark's
    no-ops), and validating it again cost as much as a SQLite insert. None when it may differ
    from one call to the next, or is not valid (the full path then says why)."""
    if not _defaults_are_constant(model):
        return None
    try:
        dumped = model.model_validate_json("{}", strict=True).model_dump(mode="json")
    except ValidationError:
        return None
    return None if _holds_nul(dumped) else json.dumps(dumped)


def _defaults_are_constant(model: type[BaseModel]) -> bool:
    """No code of the model's runs while an empty payload is validated and dumped: no
    validators, serializers or computed fields, no default factories, no default that is
    validated or is a model of its own."""
    decorators = model.__pydantic_decorators__
    if any(
        (
            decorators.validators,
            decorators.field_validators,
            decorators.root_validators,
            decorators.model_validators,
            decorators.field_serializers,
            decorators.model_serializers,
            decorators.computed_fields,
        )
    ):
        return False
    if model.model_config.get("validate_default"):
        return False
    return all(
        field.default_factory is None
        and not field.validate_default
        and not isinstance(field.default, BaseModel)
        for field in model.model_fields.values()
    )


def is_text(value: str) -> bool:
    """Whether `value` is text any database can store: no lone surrogate, which is what Python
    makes of bytes that are not UTF-8 (a command-line argument such as `$'\\xff'`)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _holds_nul(value: Any) -> bool:
    """Any string (key or value) with a NUL character: PostgreSQL cannot store one in text or
    JSONB, so neither backend accepts one (a job must not be storable on one and not the other)."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(key) or _holds_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_holds_nul(item) for item in value)
    return False


def integral_floats_as_ints(value: Any) -> Any:
    """`3.0` as `3`, all the way down: JSON (and JSON Schema) do not tell them apart, strict
    validation does, and an integer field sent `3.0` by a JavaScript client is still 3.
    A value nested deeper than MAX_JSON_DEPTH is a ValueError, never a RecursionError."""
    return _integral_floats_as_ints(value, 0)


def _integral_floats_as_ints(value: Any, depth: int) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict | list) and depth >= MAX_JSON_DEPTH:
        raise ValueError(too_deep_message("the value"))
    if isinstance(value, dict):
        return {key: _integral_floats_as_ints(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [_integral_floats_as_ints(item, depth + 1) for item in value]
    return value


def _describe_payload_error(job_type: str, error: ValidationError) -> str:
    problems = []
    for issue in error.errors():
        field_name = ".".join(str(part) for part in issue["loc"]) or "payload"
        problems.append(f"{field_name}: {issue['msg']}")
    return f"invalid payload for {job_type}: " + "; ".join(problems)


def _utc(value: datetime, where: str) -> datetime:
    if value.tzinfo is None:
        raise InvalidJobOptionError(f"{where}run_at must include a UTC offset")
    try:
        return value.astimezone(UTC)
    except OverflowError:
        # A time whose UTC value falls outside the calendar (0001-01-01T00:00:00+02:00 is
        # 0000-12-31 in UTC) is still a well-formed ISO 8601 date-time. `run_at` means "not
        # before": before year 1 is long past, so the job is due now (ADR 0027); after year
        # 9999 it is never due in practice, so the calendar's last instant is as good.
        edge = datetime.min if value.year < 2 else datetime.max
        return edge.replace(tzinfo=UTC)


def _check_options(where: str, priority: int, max_attempts: int, timeout: float | None) -> None:
    _check_range(where, "priority", priority, PRIORITY_RANGE)
    _check_range(where, "max_attempts", max_attempts, MAX_ATTEMPTS_RANGE)
    if timeout is not None and not 0 < timeout <= MAX_TIMEOUT_SECONDS:
        raise InvalidJobOptionError(
            f"{where}timeout must be between 0 and {MAX_TIMEOUT_SECONDS} seconds, got {timeout}"
        )


def _check_range(where: str, name: str, value: int, bounds: Sequence[int]) -> None:
    low, high = bounds
    if not low <= value <= high:
        raise InvalidJobOptionError(f"{where}{name} must be between {low} and {high}, got {value}")
