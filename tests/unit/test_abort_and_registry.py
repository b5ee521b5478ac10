from __future__ import annotations

import threading

import pytest
from pydantic import BaseModel

from dominus.errors import (
    DuplicateJobTypeError,
    JobAbortedError,
    NotEnqueueableError,
    UnknownJobTypeError,
)
from dominus.jobs import AbortReason, AbortSignal, EnqueueRequest, HandlerRegistry, JobContext
from dominus.jobs.client import JobQueue
from tests.support.clock import T0


class Empty(BaseModel):
    pass


def handler(_payload: Empty, _context: JobContext) -> None:
    return None


def test_abort_signal_first_reason_wins_and_callbacks_run_once() -> None:
    signal = AbortSignal()
    seen: list[AbortReason] = []
    signal.on_abort(seen.append)
    assert not signal.is_set()
    signal.raise_if_set()
    assert signal.set(AbortReason.CANCELLED)
    assert not signal.set(AbortReason.SHUTDOWN)
    assert signal.reason is AbortReason.CANCELLED
    assert seen == [AbortReason.CANCELLED]
    late: list[AbortReason] = []
    signal.on_abort(late.append)
    assert late == [AbortReason.CANCELLED]
    with pytest.raises(JobAbortedError, match="cancelled"):
        signal.raise_if_set()


def test_abort_signal_wakes_a_waiting_thread() -> None:
    signal = AbortSignal()
    woke = threading.Event()

    def waiter() -> None:
        if signal.wait(10):
            woke.set()

    thread = threading.Thread(target=waiter)
    thread.start()
    signal.set(AbortReason.TIMEOUT)
    thread.join(5)
    assert woke.is_set()


def test_registering_a_type_twice_is_an_error() -> None:
    registry = HandlerRegistry()
    registry.register("a.job", handler, Empty)
    with pytest.raises(DuplicateJobTypeError, match=r"a\.job"):
        registry.register("a.job", handler, Empty)


def test_unknown_types_name_the_registered_ones() -> None:
    registry = HandlerRegistry()
    registry.register("a.job", handler, Empty)
    with pytest.raises(UnknownJobTypeError, match=r"'b\.job'.*a\.job"):
        registry.get("b.job")


def test_restricting_a_registry() -> None:
    registry = HandlerRegistry()
    registry.register("a.job", handler, Empty)
    registry.register("b.job", handler, Empty)
    assert registry.restricted_to(["b.job"]).names() == ["b.job"]
    with pytest.raises(UnknownJobTypeError):
        registry.restricted_to(["c.job"])


def test_an_internal_type_is_built_only_for_its_owner() -> None:
    """The generic enqueue (no `internal`) refuses it, naming what to use instead; the store is
    never reached (validation happens before anything is written)."""
    registry = HandlerRegistry()
    registry.register("a.job", handler, Empty)
    registry.register("owned.job", handler, Empty, enqueue_via="POST /api/v1/owners")
    assert [entry.public for entry in registry] == [True, False]
    queue = JobQueue(store=None, registry=registry)  # type: ignore[arg-type]
    assert queue.build(EnqueueRequest("a.job"), T0).job_type == "a.job"
    with pytest.raises(NotEnqueueableError, match=r"line 3: .*'owned\.job'.*POST /api/v1/owners"):
        queue.build(EnqueueRequest("owned.job"), T0, "line 3: ")
    with pytest.raises(NotEnqueueableError):
        queue.enqueue_jobs([EnqueueRequest("a.job"), EnqueueRequest("owned.job")])
    assert queue.build(EnqueueRequest("owned.job"), T0, internal=True).job_type == "owned.job"
