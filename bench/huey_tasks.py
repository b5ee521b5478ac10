"""The huey side of the benchmark: a SqliteHuey application with one task.

`huey_consumer huey_tasks.huey` (with bench/ on PYTHONPATH) builds the application from
BENCH_HUEY_DB and BENCH_HUEY_SYNCHRONOUS; the benchmark process calls `build()` itself.

huey's SqliteStorage opens its connection with `journal_mode=wal`, and with `fsync=False` it
sets `synchronous=0` (OFF: commits never wait for the disk). DOMINUS runs WAL with
`synchronous=NORMAL`, so by default (`synchronous="normal"`) the storage below sets NORMAL
after huey's own pragmas, which makes the two durability levels the same.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from huey import SqliteHuey
from huey.api import TaskWrapper
from huey.storage import SqliteStorage

TASK_NAME = "bench.stamp"
QUEUE_NAME = "bench"


class NormalSyncStorage(SqliteStorage):
    """SqliteStorage with `synchronous=NORMAL` (as DOMINUS) instead of fsync=False's OFF."""

    def _create_connection(self) -> sqlite3.Connection:
        connection: sqlite3.Connection = super()._create_connection()
        connection.execute("pragma synchronous=NORMAL")
        return connection


def stamp() -> float:
    """The benchmark task: return when it started (also a non-None result, so it is stored)."""
    return time.time()


def build(filename: str | Path, synchronous: str = "normal") -> tuple[SqliteHuey, TaskWrapper]:
    """The application on `filename`; `synchronous` is "normal" (as DOMINUS) or "off" (huey's
    own setting for fsync=False)."""
    if synchronous not in ("normal", "off"):
        raise ValueError(f"synchronous must be 'normal' or 'off', got {synchronous!r}")
    extra = {"storage_class": NormalSyncStorage} if synchronous == "normal" else {}
    app = SqliteHuey(QUEUE_NAME, filename=str(filename), fsync=False, **extra)
    task = app.task(name=TASK_NAME)(stamp)
    return app, task


def settings(app: SqliteHuey) -> str:
    """The pragmas huey's connection actually runs with."""
    journal = app.storage.sql("pragma journal_mode", results=True)[0][0]
    synchronous = app.storage.sql("pragma synchronous", results=True)[0][0]
    names = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}
    return f"journal_mode={journal}, synchronous={names.get(synchronous, synchronous)}"


def __getattr__(name: str) -> Any:
    """`huey_tasks.huey`, built on first access (only the consumer process needs it)."""
    if name == "huey":
        app, _ = build(
            os.environ["BENCH_HUEY_DB"], os.environ.get("BENCH_HUEY_SYNCHRONOUS", "normal")
        )
        globals()["huey"] = app
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
