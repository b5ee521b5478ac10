"""The RENEWAL_CHECK job on a real worker with the process's notifier (the log and a loopback
webhook): its result and progress on the job, the schedule active, the payload checked."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime

import pytest
from sqlalchemy import Engine

from dominus.config import load_settings
from dominus.errors import InvalidPayloadError
from dominus.handlers import HandlerDependencies, build_registry
from dominus.jobs import JobQueue, JobStatus, SqlJobStore, Worker, WorkerConfig
from dominus.notify import notifier_from_settings
from dominus.runtime import Runtime
from tests.support.clock import FakeClock
from tests.support.draining import drain
from tests.support.fakes.webhook_server import FakeWebhook
from tests.support.portfolio_rows import add_entry

pytestmark = pytest.mark.backends("sqlite", "postgresql")


@pytest.fixture
def webhook() -> Iterator[FakeWebhook]:
    fake = FakeWebhook()
    yield fake
    fake.close()


def test_the_job_checks_notifies_the_webhook_and_stores_its_result(
    database_url: str, engine: Engine, store: SqlJobStore, webhook: FakeWebhook
) -> None:
    clock = FakeClock(datetime(2030, 3, 1, 23, 59, 59, tzinfo=UTC))
    settings = load_settings(
        _env_file=None,
        DATABASE_URL=database_url,
        NOTIFY_WEBHOOK_URL=webhook.url,
        RENEWAL_CRITICAL_DAYS=3,
        RENEWAL_WARNING_DAYS=10,
    )
    handlers = build_registry(
        diagnostic_jobs=False,
        dependencies=HandlerDependencies(settings, engine, clock, notifier_from_settings(settings)),
    )
    # 3 days: critical with these thresholds; 10 days: imminent; 11 days: nothing yet.
    add_entry(engine, "soon.com", date(2030, 3, 4), clock(), verdict="drop", renewal_cost=80.0)
    add_entry(engine, "later.com", date(2030, 3, 11), clock(), verdict="keep")
    add_entry(engine, "calm.com", date(2030, 3, 12), clock())
    queue = JobQueue(store, handlers, clock=clock)
    worker = Worker(store, handlers, WorkerConfig(concurrency=1), clock=clock)
    first = queue.enqueue_job("RENEWAL_CHECK").job_id
    drain(worker, clock=clock)
    job = store.get_job(first)
    assert job.status is JobStatus.COMPLETED
    assert job.result == {
        "domains_checked": 3,
        "alerts_created": 2,
        "alerts_escalated": 0,
        "notifications_sent": 2,
    }
    assert job.progress == {"done": 3, "total": 3, "domain": ""}
    [digest] = webhook.bodies()  # one webhook call for the run's two alerts
    assert (digest["event"], digest["severity"], digest["digest"]) == (
        "renewal.digest",
        "critical",
        True,
    )
    assert digest["subject"] == "2 renewal alerts: soon.com, later.com"
    assert digest["details"] == {"count": 2}
    assert [
        (
            item["event"],
            item["details"]["domain"],
            item["details"]["verdict"],
            item["details"]["renewal_cost"],
        )
        for item in digest["items"]
    ] == [
        ("renewal.critical", "soon.com", "drop", 80.0),
        ("renewal.imminent", "later.com", "keep", 12.5),
    ]
    assert digest["items"][0]["subject"] == (
        "soon.com renews in 3 days, on 2030-03-04: critical (verdict drop, renewal 80.00 USD)"
    )

    clock.advance(1)  # past midnight UTC: later.com has 9 days, calm.com 10
    second = queue.enqueue_job("RENEWAL_CHECK", {}).job_id
    drain(worker, clock=clock)
    assert store.get_job(second).result == {
        "domains_checked": 3,
        "alerts_created": 1,
        "alerts_escalated": 0,
        "notifications_sent": 1,
    }
    assert len(webhook.bodies()) == 2
    [item] = webhook.bodies()[-1]["items"]
    assert item["details"]["domain"] == "calm.com"

    clock.advance(3600)  # nothing new: no message at all
    third = queue.enqueue_job("RENEWAL_CHECK", {}).job_id
    drain(worker, clock=clock)
    assert store.get_job(third).result["notifications_sent"] == 0
    assert len(webhook.bodies()) == 2


def test_a_payload_with_anything_in_it_is_refused(
    database_url: str, engine: Engine, store: SqlJobStore, clock: FakeClock
) -> None:
    settings = load_settings(_env_file=None, DATABASE_URL=database_url)
    handlers = build_registry(
        diagnostic_jobs=False, dependencies=HandlerDependencies(settings, engine, clock)
    )
    with pytest.raises(InvalidPayloadError):
        JobQueue(store, handlers, clock=clock).enqueue_job("RENEWAL_CHECK", {"domain": "x.com"})


def test_the_renewal_schedule_is_active(database_url: str, engine: Engine) -> None:
    runtime = Runtime(
        settings=load_settings(_env_file=None, DATABASE_URL=database_url), engine=engine
    )
    states = {schedule.name: schedule.state for schedule in runtime.schedule_service().documents()}
    assert (states["renewal-check"], states["watchlist-poll"]) == ("enabled", "enabled")
