"""Jobs alike in all but their payloads (`JobsAlike`, what a batch of one type's flat payloads
builds) are stored exactly as the list of the same jobs: every column of every row, the ids in
order. SQLite inserts them by a statement of its own (the shared values bound once); the test
runs its chunks small, so a batch spans several statements and a short last one."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, text

from dominus.jobs import EnqueueRequest, JobQueue, JobStore
from dominus.jobs.model import JobsAlike, NewJob
from dominus.jobs.sql import sqlite_backend
from tests.support.clock import T0, FakeClock

pytestmark = pytest.mark.backends("sqlite", "postgresql")

TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=6)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
)
PAYLOADS = st.dictionaries(TEXT, SCALARS, min_size=1, max_size=4)
NAMES = st.text("abcxyz._-", min_size=1, max_size=12)
TEMPLATES = st.builds(
    NewJob,
    job_type=st.sampled_from(["diag.noop", "diag.sleep"]),
    payload=st.just({}),
    priority=st.integers(-1000, 1000),
    max_attempts=st.integers(1, 1000),
    run_at=st.sampled_from([T0, T0 + timedelta(seconds=5, microseconds=7), T0 - timedelta(days=3)]),
    timeout_seconds=st.one_of(st.none(), st.floats(0.001, 3600)),
    queue=st.sampled_from(["default", "reports"]),
    concurrency_key=st.one_of(st.none(), NAMES),
    concurrency_limit=st.one_of(st.none(), st.integers(1, 50)),
    rate_key=st.one_of(st.none(), NAMES),
)


def _rows(engine: Engine, ids: list[int]) -> list[tuple[Any, ...]]:
    """The rows of `ids`, in their order, less the id: each value with its type (on SQLite the
    driver's type is the value's storage class, so `1` and `1.0` differ), the payload as the
    text stored (PostgreSQL: as its JSONB text)."""
    with engine.connect() as connection:
        rows = connection.execute(
            text("SELECT *, CAST(payload AS TEXT) AS payload_text FROM job_queue ORDER BY id")
        ).mappings()
        by_id = {row["id"]: row for row in rows}
    return [
        tuple((name, type(value), value) for name, value in by_id[job_id].items() if name != "id")
        for job_id in ids
    ]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(TEMPLATES, st.lists(PAYLOADS, min_size=2, max_size=8), st.integers(1, 4))
def test_jobs_alike_are_stored_as_the_list_of_their_jobs(
    store: JobStore,
    engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    template: NewJob,
    payloads: list[dict[str, Any]],
    chunk: int,
) -> None:
    monkeypatch.setattr(sqlite_backend, "_ALIKE_CHUNK", chunk)
    alike = JobsAlike(template, payloads, [json.dumps(payload) for payload in payloads])
    by_alike = [result.job_id for result in store.enqueue(alike, T0)]
    by_list = [result.job_id for result in store.enqueue(list(alike), T0)]
    assert by_alike == list(range(by_alike[0], by_alike[0] + len(payloads)))
    assert _rows(engine, by_alike) == _rows(engine, by_list)


def test_jobs_alike_are_the_jobs_of_their_template_and_payloads() -> None:
    template = NewJob("diag.noop", {}, priority=3, max_attempts=2, run_at=T0, queue="q")
    payloads: list[dict[str, Any]] = [{"n": 1}, {"n": 2.5}]
    alike = JobsAlike(template, payloads, ['{"n": 1}', '{"n": 2.5}'])
    expected = [
        NewJob("diag.noop", payload, priority=3, max_attempts=2, run_at=T0, queue="q")
        for payload in payloads
    ]
    assert len(alike) == 2
    assert list(alike) == expected == [alike[0], alike[1]]
    assert alike[0:1] == expected[0:1]
    assert [job.payload_json for job in alike] == ['{"n": 1}', '{"n": 2.5}']
    with pytest.raises(ValueError, match="one stored text per payload"):
        JobsAlike(template, payloads, ["{}"])


# A type whose model dumps what it was sent, and one whose model changes it: `{"seconds": 2.0}`
# is sent as the int 2 (an integral float) and dumped as the float 2.0.
BATCHES: dict[str, list[dict[str, Any]]] = {
    "diag.fail": [
        {"fail_times": index, "message": f'naïve ☃ \\ "{index}"\t'} for index in range(11)
    ],
    "diag.sleep": [{"seconds": index / 4} for index in range(11)],
}


@pytest.mark.parametrize("job_type", sorted(BATCHES))
def test_a_batch_of_one_types_flat_payloads_stores_the_rows_enqueued_one_at_a_time(
    queue: JobQueue,
    engine: Engine,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
    job_type: str,
) -> None:
    monkeypatch.setattr(sqlite_backend, "_ALIKE_CHUNK", 4)
    payloads = BATCHES[job_type]
    batched = queue.enqueue_jobs([EnqueueRequest(job_type, payload) for payload in payloads])
    one_by_one = [queue.enqueue_job(job_type, payload) for payload in payloads]
    batched_ids = [result.job_id for result in batched]
    assert batched_ids == list(range(batched_ids[0], batched_ids[0] + len(payloads)))
    assert all(result.created for result in batched)
    assert _rows(engine, batched_ids) == _rows(engine, [result.job_id for result in one_by_one])
