"""The settle's histogram arms put each value in the first bucket whose upper bound is not below
it ("+Inf" when none is), on PostgreSQL, for values on, between and beyond the bounds."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from sqlalchemy import make_url

from dominus.jobs.metrics_model import DURATION_BUCKETS, INFINITY
from dominus.jobs.sql import postgres_backend
from dominus.jobs.sql.metrics import BUCKET_LABELS

pytestmark = pytest.mark.backends("postgresql")

VALUES = [
    *DURATION_BUCKETS,
    *(math.nextafter(bound, -math.inf) for bound in DURATION_BUCKETS),
    *(math.nextafter(bound, math.inf) for bound in DURATION_BUCKETS),
    0.0,
    -0.0,
    -5.0,
    1e-9,
    7200.0,
    math.inf,
    math.nan,
]


def _expected_bucket(value: float) -> str:
    return next(
        (
            label
            for bound, label in zip(DURATION_BUCKETS, BUCKET_LABELS, strict=True)
            if value <= bound
        ),
        INFINITY,
    )


@pytest.fixture
def connection(database_url: str) -> Iterator[psycopg.Connection[Any]]:
    conninfo = make_url(database_url).set(drivername="postgresql").render_as_string(False)
    with psycopg.connect(conninfo, autocommit=True) as connection:
        yield connection


def test_each_value_lands_in_the_first_bucket_not_below_it(
    connection: psycopg.Connection[Any],
) -> None:
    arms = postgres_backend._bucket_counts(
        "seconds", "duration", "bounds", "labels", len(DURATION_BUCKETS)
    )
    statement = f"""
        WITH done AS (
            SELECT position::text AS job_type, seconds
              FROM unnest(%(values)s::double precision[]) WITH ORDINALITY AS v(seconds, position)
        )
        SELECT job_type::int, bucket FROM (
            SELECT * FROM ({arms}) AS arms(job_type, name, bucket, value)
        ) AS increments WHERE name = 'duration_bucket'
    """
    rows = connection.execute(
        statement,
        {
            "values": VALUES,
            "bounds": postgres_backend._BOUNDS,
            "labels": postgres_backend._LABELS,
        },
    ).fetchall()
    buckets = dict(rows)
    assert [buckets[position] for position in range(1, len(VALUES) + 1)] == [
        _expected_bucket(value) for value in VALUES
    ]
