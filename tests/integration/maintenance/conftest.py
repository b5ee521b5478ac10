"""Shared by the maintenance tests: settings pointing at the test's database and a backup
directory of its own, the registry with the maintenance handlers, a real worker in a thread."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from dominus.config import Settings, load_settings
from dominus.handlers import HandlerDependencies, build_registry
from dominus.jobs import HandlerRegistry, JobQueue, RetryPolicy, SqlJobStore, Worker, WorkerConfig
from dominus.jobs.clock import utc_now
from tests.support.running_worker import RunningWorker


@pytest.fixture
def backup_dir(tmp_path: Path) -> Path:
    return tmp_path / "backups"


@pytest.fixture
def make_settings(database_url: str, backup_dir: Path) -> Callable[..., Settings]:
    def make(**overrides: Any) -> Settings:
        values: dict[str, Any] = {"DATABASE_URL": database_url, "BACKUP_DIR": str(backup_dir)}
        return load_settings(**(values | overrides))

    return make


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    return make_settings()


@pytest.fixture
def maintenance_registry(settings: Settings, engine: Engine) -> HandlerRegistry:
    return build_registry(
        diagnostic_jobs=True, dependencies=HandlerDependencies(settings, engine, utc_now)
    )


@pytest.fixture
def live_queue(store: SqlJobStore, maintenance_registry: HandlerRegistry) -> JobQueue:
    return JobQueue(store, maintenance_registry)


@pytest.fixture
def start_worker(
    store: SqlJobStore, maintenance_registry: HandlerRegistry
) -> Iterator[Callable[..., RunningWorker]]:
    started: list[RunningWorker] = []

    def start(**overrides: Any) -> RunningWorker:
        config: dict[str, Any] = {
            "concurrency": 2,
            "poll_interval_seconds": 0.05,
            "heartbeat_interval_seconds": 0.5,
            "max_running_age_seconds": 30,
            "graceful_shutdown_timeout_seconds": 10,
            "retry_policy": RetryPolicy(base_seconds=0.05, max_seconds=0.1),
        }
        config.update(overrides)
        worker = Worker(store, maintenance_registry, WorkerConfig(**config))
        running = RunningWorker(worker, stop_timeout=30)
        started.append(running)
        return running

    yield start
    for running in started:
        if running.thread.is_alive():
            running.stop()
