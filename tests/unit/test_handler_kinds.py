"""Sync and `async def` handlers: how the registry tells them apart, and the sync pool's threads
started only as they are needed (a worker running async jobs only starts none)."""

from __future__ import annotations

import threading
from typing import Any, cast

from pydantic import BaseModel

from dominus.jobs import HandlerRegistry, JobContext
from dominus.jobs.execution import HandlerPool, RunningJob
from tests.support.polling import wait_until


class Empty(BaseModel):
    pass


def sync_handler(_payload: Empty, _context: JobContext) -> None:
    return None


async def async_handler(_payload: Empty, _context: JobContext) -> None:
    return None


def test_the_registry_tells_async_handlers_from_sync_ones() -> None:
    registry = HandlerRegistry()
    assert not registry.register("sync", sync_handler, Empty).is_async
    assert registry.register("async", async_handler, Empty).is_async


def job(number: int) -> RunningJob:
    return cast(RunningJob, number)  # the pool only hands it to `execute`


def test_the_pool_starts_a_thread_only_when_no_started_one_is_free() -> None:
    done = threading.Semaphore(0)
    seen: list[Any] = []

    def execute(running: RunningJob) -> None:
        seen.append(running)
        done.release()

    pool = HandlerPool(8, execute, "test-pool")
    try:
        assert pool.threads_started == 0
        for number in range(20):
            pool.submit(job(number))
            assert done.acquire(timeout=5)
            wait_until(lambda: pool.idle_threads == 1)
        # One after the other: the first thread, free again, took every job.
        wait_until(lambda: len(seen) == 20)
        assert pool.threads_started == 1
    finally:
        pool.close()


def test_the_pool_grows_to_its_size_for_jobs_at_the_same_time_and_no_further() -> None:
    gate = threading.Event()
    started = threading.Semaphore(0)

    def execute(_running: RunningJob) -> None:
        started.release()
        gate.wait(10)

    pool = HandlerPool(3, execute, "test-pool")
    try:
        for number in range(3):
            pool.submit(job(number))
        for _ in range(3):
            assert started.acquire(timeout=5)
        assert pool.threads_started == 3
        pool.submit(job(3))  # more than the size: it waits for a free thread
        assert pool.threads_started == 3
        gate.set()
        assert started.acquire(timeout=5)
    finally:
        gate.set()
        pool.close()


def test_a_job_submitted_as_soon_as_a_result_is_handed_back_is_not_counted_twice() -> None:
    """The worker may dispatch the next job the moment a handler's result reaches it, before the
    pool thread that returned it is free again: the pool must not count that thread free twice
    (once for the job it then takes from the inbox, once more afterwards)."""
    gate = threading.Event()
    started = threading.Semaphore(0)
    pool: HandlerPool

    def execute(running: RunningJob) -> None:
        started.release()
        if running == job(0):
            pool.submit(job(2))  # the loop dispatching into the slot job 0 just left
            return
        gate.wait(10)

    pool = HandlerPool(2, execute, "test-pool")
    try:
        pool.submit(job(1))
        assert started.acquire(timeout=5)
        pool.submit(job(0))
        for _ in range(2):
            assert started.acquire(timeout=5)
        # Jobs 1 and 2 hold both threads; job 0's thread has returned.
        wait_until(lambda: pool.idle_threads == 0)
        assert pool.threads_started == 2
        gate.set()
        wait_until(lambda: pool.idle_threads == 2)
    finally:
        gate.set()
        pool.close()
