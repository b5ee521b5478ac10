"""When a worker's handlers start during a drain of pre-enqueued no-op jobs, relative to `run()`.

    python bench/drain_timeline.py sqlite 1 5000          # one JSON line per run
    python bench/drain_timeline.py postgres 100 5000      # scratch database drainstart_probe
    python bench/drain_timeline.py sqlite 1 5000 --trace  # and each store call and duty in time

The shared peer benchmark times a drain from the worker's ready mark (just before `run()`) until
every handler has run and the status says done; at 5,000 jobs in about half a second, any fixed
cost in that window weighs. This runs the same workload in one process (a fresh database filled
first, a fresh runtime for the worker, the library's defaults) and prints:

- `first_handler_ms`: from `run()` to the first handler's start (registration, the first claim);
- `gap0_ms`: from the first handler's start to the second's (the first claim takes one job at
  concurrency 1, before the worker knows how long jobs take: ADR 0033);
- `gaps_over_1ms`: how many gaps between handler starts exceed 1 ms and their sum (handlers
  waiting for the loop's settle-and-claim of the next batch);
- `last_settle_after_last_handler_ms`: from the last handler's start to the end of the store
  call that recorded it, and `run_return_after_last_handler_ms`;
- `duties`: the maintenance thread's turns in the first second (start ms, duration ms).

Wall-clock times on a shared machine: compare medians of interleaved runs only.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from dominus.config import Settings
from dominus.db.engine import create_database_engine
from dominus.jobs import EnqueueRequest, HandlerRegistry, JobContext, JobQueue, Worker, maintenance
from dominus.runtime import build_runtime
from dominus.schema.migrate import upgrade

SQLITE_PATH = "/tmp/drain_timeline/timeline.db"
PG_SERVER = "postgresql://postgres@127.0.0.1:5432/postgres"
PG_DATABASE = "drainstart_probe"
STORE_CALLS = ("settle", "register_worker", "heartbeat", "cancel_requests", "maintain")

# (what, thread, start, end) in perf_counter seconds
Event = tuple[str, str, float, float]


class Noop(BaseModel):
    i: int
    t: float


def fresh_database(backend: str) -> str:
    if backend == "sqlite":
        os.makedirs(os.path.dirname(SQLITE_PATH), exist_ok=True)
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(SQLITE_PATH + suffix):
                os.remove(SQLITE_PATH + suffix)
        url = f"sqlite:///{SQLITE_PATH}"
    else:
        import psycopg  # noqa: PLC0415 - only for PostgreSQL

        with psycopg.connect(PG_SERVER, autocommit=True) as connection:
            connection.execute(f"DROP DATABASE IF EXISTS {PG_DATABASE}")
            connection.execute(f"CREATE DATABASE {PG_DATABASE}")
        url = f"postgresql+psycopg://postgres@127.0.0.1:5432/{PG_DATABASE}"
    engine = create_database_engine(url)
    upgrade(engine)
    engine.dispose()
    return url


def timed(events: list[Event], what: str, call: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return call(*args, **kwargs)
        finally:
            thread = threading.current_thread().name
            events.append((what, thread, start, time.perf_counter()))

    return wrapper


def trace_duties(events: list[Event]) -> None:
    perform = maintenance.MaintenanceThread._perform

    def traced(duty: maintenance.PeriodicDuty) -> None:
        timed(events, "duty:" + duty.name, perform)(duty)

    maintenance.MaintenanceThread._perform = staticmethod(traced)  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("backend", choices=("sqlite", "postgres"))
    parser.add_argument("concurrency", type=int)
    parser.add_argument("jobs", type=int)
    parser.add_argument("--trace", action="store_true", help="print the first 200 ms in detail")
    args = parser.parse_args()

    url = fresh_database(args.backend)
    starts: list[float] = []

    def noop(_payload: Noop, _context: JobContext) -> None:
        starts.append(time.perf_counter())

    registry = HandlerRegistry()
    registry.register("noop", noop, Noop)
    settings = Settings(DATABASE_URL=url, DOMINUS_LOG_LEVEL="WARNING")
    filling = build_runtime(settings)
    queue = JobQueue(filling.store, registry, clock=filling.clock)
    for first in range(0, args.jobs, 1000):
        last = min(args.jobs, first + 1000)
        queue.enqueue_jobs([EnqueueRequest("noop", {"i": i, "t": 0.0}) for i in range(first, last)])
    filling.engine.dispose()

    runtime = build_runtime(settings)
    events: list[Event] = []
    for name in STORE_CALLS:
        setattr(runtime.store, name, timed(events, name, getattr(runtime.store, name)))
    trace_duties(events)
    config = runtime.worker_config(concurrency=args.concurrency)
    worker = Worker(
        runtime.store, registry, config, clock=runtime.clock, watcher=runtime.change_watcher()
    )

    def stop_when_all_started() -> None:
        while len(starts) < args.jobs:
            time.sleep(0.001)
        worker.request_shutdown()

    threading.Thread(target=stop_when_all_started, daemon=True).start()
    began = time.perf_counter()
    worker.run()
    returned = time.perf_counter()
    print(json.dumps(summary(starts, events, began, returned)))
    if args.trace:
        print_trace(starts, events, began)


def summary(
    starts: list[float], events: list[Event], began: float, returned: float
) -> dict[str, Any]:
    def ms(seconds: float) -> float:
        return round(seconds * 1e3, 2)

    gaps = [later - earlier for earlier, later in itertools.pairwise(starts)]
    long_gaps = [gap for gap in gaps if gap > 0.001]
    last_settle = max(end for what, _, _, end in events if what == "settle")
    return {
        "first_handler_ms": ms(starts[0] - began),
        "gap0_ms": ms(gaps[0]),
        "handlers_span_ms": ms(starts[-1] - starts[0]),
        "gaps_over_1ms": len(long_gaps),
        "gaps_over_1ms_total_ms": ms(sum(long_gaps)),
        "last_settle_after_last_handler_ms": ms(last_settle - starts[-1]),
        "run_return_after_last_handler_ms": ms(returned - starts[-1]),
        "duties": [
            (what.removeprefix("duty:"), ms(start - began), ms(end - start))
            for what, _, start, end in events
            if what.startswith("duty:") and start - began < 1.0
        ],
    }


def print_trace(starts: list[float], events: list[Event], began: float) -> None:
    print("handlers 0-2 start at", ", ".join(f"{(s - began) * 1e3:.2f} ms" for s in starts[:3]))
    for what, thread, start, end in sorted(events, key=lambda event: event[2]):
        if start - began < 0.2:
            at, took = (start - began) * 1e3, (end - start) * 1e3
            print(f"  {what:28s} {thread[:16]:16s} {at:8.2f} ms  {took:7.2f} ms")


if __name__ == "__main__":
    main()
