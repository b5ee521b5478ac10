"""Diagnostic job types, for benchmarks, smoke tests and operators. Registered only on request
(`--diagnostic-jobs` or DOMINUS_DIAGNOSTIC_JOBS=1): `diag.crash` kills its worker on purpose.

- diag.noop                      returns {}
- diag.sleep {seconds}           sleeps, stopping early (as aborted) when its abort signal is set
- diag.fail {fail_times, message}
                                 raises while the job has failed fewer than `fail_times` times
                                 in its whole life (DLQ requeues included), then returns
                                 {"failures_before_success": n}
- diag.crash                     kills the worker process with SIGKILL, as a crash would
- diag.ignore_abort {seconds}    sleeps without ever looking at its abort signal

The same as `async def` handlers, run on the worker's event loop (ADR 0029):

- diag.async_noop                returns {}
- diag.async_sleep {seconds}     sleeps with asyncio, reporting progress; an abort cancels it
- diag.async_fail {fail_times, message}
                                 as diag.fail
- diag.async_swallow_cancel {seconds}
                                 sleeps; when cancelled, swallows the CancelledError and returns
                                 {"swallowed": true}, as a careless handler would
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dominus.jobs.context import JobContext
from dominus.jobs.registry import HandlerRegistry

MAX_SLEEP_SECONDS = 86_400.0
SLEEP_PROGRESS_INTERVAL = 1.0


class DeliberateFailureError(RuntimeError):
    """Raised by diag.fail on purpose."""


class NoPayload(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SleepPayload(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seconds: float = Field(default=1.0, ge=0, le=MAX_SLEEP_SECONDS)


class FailPayload(BaseModel):
    model_config = ConfigDict(extra="forbid")
    fail_times: int = Field(default=1, ge=0, le=1_000_000)
    message: str = Field(default="diagnostic failure", max_length=10_000)


def noop(_payload: NoPayload, _context: JobContext) -> dict[str, Any]:
    return {}


def sleep(payload: SleepPayload, context: JobContext) -> dict[str, Any]:
    deadline = time.monotonic() + payload.seconds
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return {"slept_seconds": payload.seconds}
        if context.abort.wait(min(remaining, SLEEP_PROGRESS_INTERVAL)):
            context.abort.raise_if_set()
        slept = payload.seconds - max(0.0, deadline - time.monotonic())
        context.progress(slept_seconds=round(slept, 3), total_seconds=payload.seconds)


def fail(payload: FailPayload, context: JobContext) -> dict[str, Any]:
    failures = context.job.failure_count
    if failures < payload.fail_times:
        raise DeliberateFailureError(
            f"{payload.message} (failure {failures + 1} of {payload.fail_times})"
        )
    return {"failures_before_success": failures}


def crash(_payload: NoPayload, _context: JobContext) -> dict[str, Any]:
    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("unreachable: the process was killed")  # pragma: no cover


def ignore_abort(payload: SleepPayload, _context: JobContext) -> dict[str, Any]:
    time.sleep(payload.seconds)
    return {"slept_seconds": payload.seconds}


async def async_noop(_payload: NoPayload, _context: JobContext) -> dict[str, Any]:
    return {}


async def async_sleep(payload: SleepPayload, context: JobContext) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + payload.seconds
    while (remaining := deadline - loop.time()) > 0:
        await asyncio.sleep(min(remaining, SLEEP_PROGRESS_INTERVAL))
        slept = payload.seconds - max(0.0, deadline - loop.time())
        await context.aprogress(slept_seconds=round(slept, 3), total_seconds=payload.seconds)
    return {"slept_seconds": payload.seconds}


async def async_fail(payload: FailPayload, context: JobContext) -> dict[str, Any]:
    return fail(payload, context)


async def async_swallow_cancel(payload: SleepPayload, _context: JobContext) -> dict[str, Any]:
    try:
        await asyncio.sleep(payload.seconds)
    except asyncio.CancelledError:
        return {"swallowed": True}
    return {"slept_seconds": payload.seconds}


def register_diagnostic_jobs(registry: HandlerRegistry) -> HandlerRegistry:
    registry.register("diag.noop", noop, NoPayload)
    registry.register("diag.sleep", sleep, SleepPayload)
    registry.register("diag.fail", fail, FailPayload)
    registry.register("diag.crash", crash, NoPayload)
    registry.register("diag.ignore_abort", ignore_abort, SleepPayload)
    registry.register("diag.async_noop", async_noop, NoPayload)
    registry.register("diag.async_sleep", async_sleep, SleepPayload)
    registry.register("diag.async_fail", async_fail, FailPayload)
    registry.register("diag.async_swallow_cancel", async_swallow_cancel, SleepPayload)
    return registry
