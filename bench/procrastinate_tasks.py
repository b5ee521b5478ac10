"""The procrastinate side of the benchmark: an App with one no-op task.

`procrastinate --app=procrastinate_tasks.app ...` (with bench/ on PYTHONPATH) uses the module's
`app`, connected to BENCH_PROCRASTINATE_DSN (a libpq URL); the benchmark process calls
`build()` for each database itself. The task is `async def`: procrastinate runs coroutine tasks
on its event loop directly (a sync task goes through a thread, `sync_to_async`), so this is its
fastest path for a no-op.
"""

from __future__ import annotations

import os
from typing import Any

from procrastinate import App, PsycopgConnector
from procrastinate.tasks import Task

TASK_NAME = "bench.noop"


async def noop() -> None:
    """The benchmark task: nothing."""


def build(dsn: str) -> tuple[App, Task[Any, Any, Any]]:
    app = App(connector=PsycopgConnector(conninfo=dsn))
    task = app.task(name=TASK_NAME)(noop)
    return app, task


app, _task = build(os.environ.get("BENCH_PROCRASTINATE_DSN", ""))
