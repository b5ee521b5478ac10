"""The WATCHLIST_POLL job on a real worker: registered, scheduled, its payload checked at
enqueue, its result and progress stored on the job, with the process's providers (loopback
DNS and RDAP servers) and notifier."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine

from dominus.config import load_settings
from dominus.errors import InvalidPayloadError
from dominus.handlers import HandlerDependencies, build_registry
from dominus.jobs import JobQueue, JobStatus, SqlJobStore, Worker, WorkerConfig
from dominus.jobs.registry import HandlerRegistry
from dominus.providers.models import StopSignal
from dominus.providers.rate_gate import OnWait, rdap_key, server_of
from dominus.runtime import Runtime
from dominus.watchlist.store import WatchlistStore
from tests.support.clock import FakeClock
from tests.support.draining import drain
from tests.support.watch_fixtures import RecordingNotifier, Registry, provider_settings

pytestmark = pytest.mark.backends("sqlite", "postgresql")


@pytest.fixture
def registry() -> Iterator[Registry]:
    fake = Registry()
    yield fake
    fake.close()


@pytest.fixture
def notifier() -> RecordingNotifier:
    return RecordingNotifier()


@pytest.fixture
def handlers(
    database_url: str,
    engine: Engine,
    registry: Registry,
    notifier: RecordingNotifier,
    clock: FakeClock,
    tmp_path: Path,
) -> HandlerRegistry:
    settings = load_settings(**provider_settings(database_url, registry, str(tmp_path)))
    return build_registry(
        diagnostic_jobs=False,
        dependencies=HandlerDependencies(settings, engine, clock, notifier),
    )


def test_the_job_polls_and_stores_its_result(
    store: SqlJobStore,
    engine: Engine,
    handlers: HandlerRegistry,
    registry: Registry,
    notifier: RecordingNotifier,
    clock: FakeClock,
) -> None:
    watchlist = WatchlistStore(engine)
    watchlist.add("free.test", None, clock())
    watchlist.add("taken.test", None, clock())
    registry.available("free.test")
    registry.registered("taken.test")
    queue = JobQueue(store, handlers, clock=clock)
    job_id = queue.enqueue_job("WATCHLIST_POLL").job_id
    worker = Worker(store, handlers, WorkerConfig(concurrency=1), clock=clock)
    assert drain(worker, clock=clock) == 1
    job = store.get_job(job_id)
    assert job.status is JobStatus.COMPLETED
    assert job.result == {
        "checked": 2,
        "available": 1,
        "notified": 1,
        "drop_changes": 0,
        "errors": [],
        "dry_run": False,
    }
    assert job.progress == {"done": 2, "total": 2, "domain": ""}
    assert notifier.events() == ["watchlist.available"]

    dry = queue.enqueue_job("WATCHLIST_POLL", {"dryRun": True}).job_id
    clock.advance(6 * 3600)
    drain(worker, clock=clock)
    assert store.get_job(dry).result == {
        "checked": 2,
        "available": 1,
        "notified": 0,  # already notified
        "drop_changes": 0,
        "errors": [],
        "dry_run": True,
    }
    assert watchlist.get("free.test").last_checked_at != clock()  # nothing written


class TellingGate:
    """Lets every request through, but tells the caller's hook that it waits for the key until
    UNTIL, and never that the wait is over: the job's last progress keeps saying so."""

    UNTIL = datetime(2030, 1, 1, 12, 3, 10, tzinfo=UTC)

    def __init__(self) -> None:
        self.keys: list[str] = []

    def acquire(self, key: str, stop: StopSignal | None, on_wait: OnWait | None = None) -> bool:
        self.keys.append(key)
        if on_wait is not None:
            on_wait(key, self.UNTIL)
        return True

    def finished(self, key: str) -> None:
        pass

    def pause(self, key: str, seconds: float, reason: str) -> None:
        pass


def test_the_jobs_lookups_wait_at_the_process_gate_and_say_so_in_its_progress(
    database_url: str,
    store: SqlJobStore,
    engine: Engine,
    registry: Registry,
    notifier: RecordingNotifier,
    clock: FakeClock,
    tmp_path: Path,
) -> None:
    settings = load_settings(**provider_settings(database_url, registry, str(tmp_path)))
    gate = TellingGate()
    handlers = build_registry(
        diagnostic_jobs=False,
        dependencies=HandlerDependencies(settings, engine, clock, notifier, gate),
    )
    WatchlistStore(engine).add("free.test", None, clock())
    registry.available("free.test")
    job_id = JobQueue(store, handlers, clock=clock).enqueue_job("WATCHLIST_POLL").job_id
    drain(Worker(store, handlers, WorkerConfig(concurrency=1), clock=clock), clock=clock)
    key = rdap_key(registry.rdap_server.base)
    assert gate.keys == [key]
    assert store.get_job(job_id).progress == {
        "done": 1,
        "total": 1,
        "domain": "",
        "waiting_for": {"server": server_of(key), "until": "2030-01-01T12:03:10+00:00"},
    }


@pytest.mark.parametrize("payload", [{"dryRun": "maybe"}, {"domain": "x.test"}])
def test_a_bad_payload_is_refused_at_enqueue(
    store: SqlJobStore, handlers: HandlerRegistry, clock: FakeClock, payload: dict[str, object]
) -> None:
    with pytest.raises(InvalidPayloadError):
        JobQueue(store, handlers, clock=clock).enqueue_job("WATCHLIST_POLL", payload)


def test_the_watchlist_schedule_is_active_once_the_type_is_registered(
    database_url: str, engine: Engine
) -> None:
    runtime = Runtime(settings=load_settings(DATABASE_URL=database_url), engine=engine)
    states = {schedule.name: schedule.state for schedule in runtime.schedule_service().documents()}
    assert states["watchlist-poll"] == "enabled"
