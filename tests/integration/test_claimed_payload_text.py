"""Every claim hands out jobs carrying their payload's JSON text, undecoded (the worker loop
claims, a handler thread validates), and the payload a claimed job shows is the one enqueued."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine

from dominus.jobs import Limiters, RateLimit, SqlJobStore
from dominus.jobs.model import ClaimRequest, Completed, Job, NewJob
from dominus.jobs.sql.limits import RateLimitStore

pytestmark = pytest.mark.backends("sqlite", "postgresql")

NOW = datetime(2026, 12, 6, 8, 0, tzinfo=UTC)
PAYLOAD = {
    "name": "café ☕",
    "at": "2026-01-02T03:04:05Z",
    "items": [{"n": 1, "x": 2.5}, {"n": 2, "x": None}],
    "flag": True,
}


def _enqueue(store: SqlJobStore, **options: str | int) -> int:
    job = NewJob("t", PAYLOAD, 0, 3, NOW, **options)  # type: ignore[arg-type]
    return store.enqueue([job], NOW)[0].job_id


def _plain(store: SqlJobStore) -> list[Job]:
    _enqueue(store)
    return store.claim("w1", ["t"], 5, NOW)


def _named_queues(store: SqlJobStore) -> list[Job]:
    _enqueue(store, queue="mail")
    return store.claim("w1", ["t"], 5, NOW, queues=["mail"])


def _keyed(store: SqlJobStore) -> list[Job]:
    _enqueue(store, concurrency_key="account-1", concurrency_limit=1)
    return store.claim("w1", ["t"], 5, NOW)


def _settle_and_claim(store: SqlJobStore) -> list[Job]:
    _enqueue(store)
    _enqueue(store, concurrency_key="account-1", concurrency_limit=2)
    (first,) = store.claim("w1", ["t"], 1, NOW)
    done = Completed(first.claim, None, job_type="t")
    accepted, claimed = store.settle([done], NOW, claim_for=ClaimRequest("w1", ["t"], 5))
    assert accepted == [True]
    return claimed


CLAIMS: dict[str, Callable[[SqlJobStore], list[Job]]] = {
    "plain": _plain,
    "named queues": _named_queues,
    "keyed": _keyed,
    "settle and claim": _settle_and_claim,
}


@pytest.mark.parametrize("claim", CLAIMS.values(), ids=CLAIMS.keys())
def test_a_claimed_job_carries_its_payload_text_undecoded(
    store: SqlJobStore, claim: Callable[[SqlJobStore], list[Job]]
) -> None:
    claimed = claim(store)

    assert claimed
    for job in claimed:
        assert job.payload_text is not None
        assert "payload" not in vars(job)
        assert job.payload == PAYLOAD
        assert job.payload_text is None  # read: the dict is the payload now


def test_a_rate_limited_claim_hands_out_payload_text_too(
    store: SqlJobStore, engine: Engine
) -> None:
    limiters = Limiters(RateLimitStore(engine, server_clock=False), lambda: NOW)
    limiters.configure("smtp", RateLimit(1, 60.0))
    first, second = _enqueue(store, rate_key="smtp"), _enqueue(store, rate_key="smtp")

    claimed = store.claim("w1", ["t"], 5, NOW)

    assert [job.id for job in claimed] == [first]  # the second waits for a token
    assert claimed[0].payload_text is not None
    assert claimed[0].payload == PAYLOAD
    assert store.get_job(second).payload == PAYLOAD  # not claimed: read whole, as a dict


def test_a_job_read_by_id_has_its_payload_as_a_dict(store: SqlJobStore) -> None:
    job_id = _enqueue(store)
    store.claim("w1", ["t"], 5, NOW + timedelta(seconds=1))
    read = store.get_job(job_id)
    assert read.payload_text is None
    assert read.payload == PAYLOAD
