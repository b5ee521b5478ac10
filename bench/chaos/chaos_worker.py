#!/usr/bin/env python3
"""One chaos worker process: the real worker (`dominus.jobs.Worker`, built from the settings in
the environment exactly as `dominus worker` builds it) running one job type, `chaos.record`,
whose handler writes every execution to an append-only file outside the database.

Each execution appends two JSON lines, fsync'd before the handler goes on: `start` (job id,
attempt, worker id, pid, wall time) before its work, `end` after it (`error` instead when the
handler raised: its run ended, not completed). A line that reached the file survives a SIGKILL
of this process a moment later. The file is per process (`events-<pid>.jsonl` in
CHAOS_EVENTS_DIR), so no two processes append to one file.

A job whose payload names a `rate_key` asks that shared limiter (`context.limiter(key)
.acquire()`, ADR 0053) before its simulated outside call. Every grant the limiters' store makes
is recorded as a `grant` line: the time stamped in the database (the clock the guarantee is
stated in) and the wall times just before and after the statement.

Run by bench/chaos/chaos.py; not a command of DOMINUS.
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from sqlalchemy import Engine

from dominus.cli.runtime import open_runtime
from dominus.cli.worker import _install_signal_handlers
from dominus.jobs import HandlerRegistry, JobContext, Worker
from dominus.jobs.limits import Limiters
from dominus.jobs.sql.limits import Granted, RateLimitStore

JOB_TYPE = "chaos.record"


class ChaosJob(BaseModel):
    n: int
    min_seconds: float = 0.05
    max_seconds: float = 0.25
    rate_key: str | None = None  # a shared limiter asked before the simulated outside call


class EventLog:
    """Append-only JSON lines, each flushed and fsync'd before `write` returns. The file is
    created by the first event: its existence tells the driver this worker has run a job."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._fd: int | None = None
        self._lock = threading.Lock()

    def write(self, event: dict[str, Any]) -> None:
        line = (json.dumps(event, separators=(",", ":")) + "\n").encode()
        with self._lock:
            if self._fd is None:
                self._fd = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            os.write(self._fd, line)
            os.fsync(self._fd)


class RecordingRateLimitStore(RateLimitStore):
    """The limiters' store, writing each grant it makes to the event log once its statement
    has committed (a SIGKILL in between loses the line: the check can only under-count)."""

    def __init__(self, engine: Engine, events: EventLog) -> None:
        super().__init__(engine)
        self._events = events

    def grant(self, key: str, now: datetime) -> Granted | None:
        before = time.time()
        granted = super().grant(key, now)
        if granted is not None:
            self._events.write(
                {
                    "e": "grant",
                    "key": key,
                    "slot": granted.slot,
                    # The moment stamped (the server's clock on PostgreSQL), not the caller's.
                    "at": granted.at.timestamp(),
                    "t0": before,
                    "t1": time.time(),
                    "pid": os.getpid(),
                }
            )
        return granted


def chaos_registry(events: EventLog) -> HandlerRegistry:
    registry = HandlerRegistry()
    pid = os.getpid()

    def record(payload: ChaosJob, context: JobContext) -> dict[str, int]:
        job = context.job
        about = {"job": job.id, "attempt": job.attempts, "worker": job.locked_by, "pid": pid}
        events.write({"e": "start", "t": time.time(), **about})
        try:
            if payload.rate_key is not None:
                context.limiter(payload.rate_key).acquire()
            context.abort.wait(random.uniform(payload.min_seconds, payload.max_seconds))
            context.abort.raise_if_set()
        except BaseException:
            # The run ended here (a limiter's database call failed, the claim was lost): its
            # interval ends now, and the job is not completed by it.
            events.write({"e": "error", "t": time.time(), **about})
            raise
        events.write({"e": "end", "t": time.time(), **about})
        return {"n": payload.n}

    # Many attempts: a job may be hit by several kills; the harness measures loss, not the
    # retry limit (a dead-lettered job would be counted as lost all the same).
    registry.register(JOB_TYPE, record, ChaosJob, max_attempts=25)
    return registry


def main() -> None:
    directory = Path(os.environ["CHAOS_EVENTS_DIR"])
    events = EventLog(directory / f"events-{os.getpid()}.jsonl")
    runtime = open_runtime()
    worker = Worker(
        runtime.store,
        chaos_registry(events),
        runtime.worker_config(),
        clock=runtime.clock,
        watcher=runtime.change_watcher(),
        limiters=Limiters(RecordingRateLimitStore(runtime.engine, events), runtime.clock),
    )
    _install_signal_handlers(worker)
    worker.run()
    sys.exit(0)


if __name__ == "__main__":
    main()
