"""The event loop on which a worker runs its `async def` handlers (ADR 0029).

One loop on one thread per worker, started with the first async job: an async attempt is a task
on it, not a thread. The worker's loop thread hands attempts over (`submit`); when an attempt's
abort signal is set (cancel request, timeout, shutdown abort, lost claim) its task is cancelled,
so the handler gets a CancelledError at the `await` it is waiting on.

The loop must never block: the engine's own calls (the store, the worker) stay synchronous and
happen elsewhere; a handler reaches the database through `await asyncio.to_thread(...)` or the
context's `await ctx.aprogress(...)`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any

from dominus.jobs.execution import RunningJob

log = logging.getLogger("dominus.worker")

AsyncExecute = Callable[[RunningJob], Coroutine[Any, Any, None]]


class HandlerLoop:
    """An asyncio loop on a thread of its own. `submit` and `close` are called from the worker's
    loop thread; abort callbacks may come from any thread."""

    def __init__(self, execute: AsyncExecute, name: str, *, close_grace_seconds: float) -> None:
        self._execute = execute
        self._close_grace = close_grace_seconds
        self._loop = asyncio.new_event_loop()
        self._closing = threading.Event()
        # Attempts handed over and not yet started; one wake-up of the loop starts them all.
        self._inbox: list[RunningJob] = []
        self._inbox_lock = threading.Lock()
        # Touched on the loop's thread only.
        self._tasks: set[asyncio.Task[None]] = set()
        self._stop: asyncio.Event | None = None
        self._started = threading.Event()
        # A daemon, as the handler pool's threads are: a handler that blocks the loop (a sync
        # sleep inside `async def`) must not keep the process alive once its job is recorded.
        # Any other way, the thread ends in `close`, which joins it.
        self._thread = threading.Thread(target=self._serve, name=f"{name}-async", daemon=True)
        self._thread.start()
        self._started.wait()

    def submit(self, running: RunningJob) -> None:
        with self._inbox_lock:
            self._inbox.append(running)
            if len(self._inbox) > 1:
                return  # the loop has been woken for the first and takes this one too
        self._loop.call_soon_threadsafe(self._start_handed_over)

    def close(self) -> None:
        """Cancel the tasks still running (handlers the worker gave up on), wait up to the grace
        for them to end, stop the loop and join its thread."""
        if self._closing.is_set():
            return
        self._closing.set()
        stop = self._stop
        if stop is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(stop.set)
        # The loop's own wait is bounded by the grace; the extra second covers the executor.
        self._thread.join(self._close_grace + 1.0)
        if self._thread.is_alive():
            log.warning("the async handler loop did not stop; a handler is blocking it")

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._run_until_closed())
        finally:
            self._loop.close()

    async def _run_until_closed(self) -> None:
        self._stop = asyncio.Event()
        self._started.set()
        await self._stop.wait()
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=self._close_grace)
        await self._loop.shutdown_default_executor()

    def _start_handed_over(self) -> None:
        with self._inbox_lock:
            handed_over, self._inbox = self._inbox, []
        for running in handed_over:
            self._start(running)

    def _start(self, running: RunningJob) -> None:
        """On the loop: start the attempt's task and cancel it when its abort is set."""
        task = self._loop.create_task(self._execute(running), name=f"job-{running.job.id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        # Registered after create_task: an abort already set schedules the cancel behind the
        # task's first step, so the handler's own code always sees the CancelledError.
        running.abort.on_abort(lambda _reason: self._cancel_soon(task))

    def _cancel_soon(self, task: asyncio.Task[None]) -> None:
        # RuntimeError: the loop has closed, and the task ended with it.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(task.cancel)
