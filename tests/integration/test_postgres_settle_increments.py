"""The PostgreSQL settle's metrics increments, counted per job type and bucket, are the ones the
earlier statement made (a row per increment, seven a job, grouped afterwards): the same rows,
and each value the same float to the bit (sums add the same values in the same order), for any
mix of job types and of measured, unmeasured and odd values (NaN, infinities, -0.0, negatives).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import make_url

from dominus.jobs.metrics_model import DURATION_BUCKETS, PICKUP_BUCKETS
from dominus.jobs.sql import postgres_backend

pytestmark = pytest.mark.backends("postgresql")


def _earlier_arms(column: str, metric: str, bounds: str, labels: str, count: int) -> str:
    """The earlier statement's arms of one histogram: a row per increment."""
    return f"""
        SELECT job_type, '{metric}_count', '', 1.0 FROM done WHERE {column} IS NOT NULL
        UNION ALL
        SELECT job_type, '{metric}_sum', '', GREATEST({column}, 0) FROM done
         WHERE {column} IS NOT NULL
        UNION ALL
        SELECT job_type, '{metric}_bucket',
               COALESCE(CASE WHEN {column} <> 'NaN'
                             THEN (%({labels})s::text[])[
                                 {count + 1} - width_bucket(-{column},
                                                            %({bounds})s::double precision[])]
                        END, '+Inf'),
               1.0
          FROM done WHERE {column} IS NOT NULL
"""


_DONE = """
    WITH done AS (
        SELECT job_type, seconds, pickup
          FROM unnest(%(types)s::text[], %(seconds)s::double precision[],
                      %(pickups)s::double precision[]) WITH ORDINALITY
               AS batch(job_type, seconds, pickup, position)
         ORDER BY position
    )"""

_EARLIER = f"""{_DONE}, increments AS (
        SELECT job_type, 'completed' AS name, '' AS bucket, 1.0::double precision AS value
          FROM done
        UNION ALL
        {_earlier_arms("seconds", "duration", "bounds", "labels", len(DURATION_BUCKETS))}
        UNION ALL
        {_earlier_arms("pickup", "pickup", "pickup_bounds", "pickup_labels", len(PICKUP_BUCKETS))}
    )
    SELECT name, job_type, bucket, sum(value) FROM increments GROUP BY name, job_type, bucket
"""

_NOW = f"""{_DONE}, {postgres_backend._INCREMENTS}
    SELECT name, job_type, bucket, value FROM increments
"""

_ODD = [math.nan, math.inf, -math.inf, -0.0, 0.0, -1.5, 1e-12, 1e300]
_BOUNDS = sorted({*DURATION_BUCKETS, *PICKUP_BUCKETS})
_VALUES = st.one_of(
    st.none(),
    st.sampled_from(_ODD),
    st.sampled_from(_BOUNDS),
    st.sampled_from(_BOUNDS).map(lambda bound: math.nextafter(bound, math.inf)),
    st.floats(min_value=0, max_value=10_000, allow_nan=False),
)
_COMPLETIONS = st.lists(
    st.tuples(st.sampled_from(["a", "b", "noop"]), _VALUES, _VALUES), max_size=40
)


def _bits(value: float) -> bytes:
    return struct.pack("<d", value)


_Row = tuple[str, str, str, bytes]


def _rows(
    connection: psycopg.Connection[Any], statement: str, parameters: dict[str, Any]
) -> set[_Row]:
    rows = connection.execute(statement, parameters).fetchall()
    return {(name, job_type, bucket, _bits(value)) for name, job_type, bucket, value in rows}


@pytest.fixture
def connection(database_url: str) -> Iterator[psycopg.Connection[Any]]:
    conninfo = make_url(database_url).set(drivername="postgresql").render_as_string(False)
    with psycopg.connect(conninfo, autocommit=True) as connection:
        yield connection


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(completions=_COMPLETIONS)
def test_the_increments_are_the_earlier_statements(
    connection: psycopg.Connection[Any], completions: list[tuple[str, float | None, float | None]]
) -> None:
    parameters = {
        "types": [job_type for job_type, _, _ in completions],
        "seconds": [seconds for _, seconds, _ in completions],
        "pickups": [pickup for _, _, pickup in completions],
        "bounds": postgres_backend._BOUNDS,
        "labels": postgres_backend._LABELS,
        "pickup_bounds": postgres_backend._PICKUP_BOUNDS,
        "pickup_labels": postgres_backend._PICKUP_LABELS,
    }
    now = _rows(connection, _NOW, parameters)
    assert now == _rows(connection, _EARLIER, parameters)
    assert len(now) == len(connection.execute(_NOW, parameters).fetchall())  # one row a key
