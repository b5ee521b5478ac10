"""The pgqueuer side of the benchmark: a QueueManager with one no-op entrypoint.

`pgq run pgqueuer_tasks:create_manager --batch-size 100 ...` (with bench/ on PYTHONPATH) calls
`create_manager()`, which connects with asyncpg (pgqueuer's default driver) to
BENCH_PGQUEUER_DSN. pgqueuer 1.6 wants the factory to be an async context manager (its README's
"Quick Start" still shows a plain coroutine, which `pgq run` 1.6 rejects with a TypeError
explaining the context-manager form used here).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
from pgqueuer import QueueManager
from pgqueuer.db import AsyncpgDriver
from pgqueuer.models import Job
from pgqueuer.queries import Queries

ENTRYPOINT = "bench.noop"


@asynccontextmanager
async def create_manager() -> AsyncIterator[QueueManager]:
    connection = await asyncpg.connect(dsn=os.environ["BENCH_PGQUEUER_DSN"])
    try:
        manager = QueueManager(Queries(AsyncpgDriver(connection)))

        @manager.entrypoint(ENTRYPOINT)
        async def noop(job: Job) -> None:
            """The benchmark task: nothing."""

        yield manager
    finally:
        await connection.close()
