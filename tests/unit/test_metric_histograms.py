"""The histograms' bucket arithmetic: which bucket an observation lands in, and the cumulative
reading."""

from __future__ import annotations

import pytest

from dominus.jobs.metrics_model import PICKUP_BUCKETS
from dominus.jobs.sql.metrics import DURATIONS, PICKUP_LABELS, PICKUPS, Increments


@pytest.mark.parametrize(
    ("seconds", "label"),
    [
        (0.0, "0.005"),
        (0.005, "0.005"),  # a bound holds its own value (Prometheus' `le`)
        (0.0051, "0.01"),
        (0.3, "0.5"),
        (2.5, "2.5"),
        (40.0, "60"),
        (300.0, "300"),
        (300.001, "+Inf"),
    ],
)
def test_a_pickup_lands_in_the_lowest_bucket_that_holds_it(seconds: float, label: str) -> None:
    assert PICKUPS.label_for(seconds) == label


def test_the_pickup_buckets_are_the_documented_ones() -> None:
    assert PICKUP_BUCKETS == (
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300
    )  # fmt: skip
    assert PICKUP_LABELS[0] == "0.005" and PICKUP_LABELS[-1] == "300"


def test_a_completion_observes_its_duration_and_its_pickup_apart() -> None:
    increments = Increments()
    increments.completed("t", duration_seconds=0.2, pickup_seconds=40.0)
    increments.completed("t", duration_seconds=None, pickup_seconds=-0.5)  # clock skew: 0
    increments.completed("t", duration_seconds=7.0, pickup_seconds=None)
    values = increments.values
    assert values[(PICKUPS.count, "t", "")] == 2
    assert values[(PICKUPS.sum, "t", "")] == 40.0
    assert values[(PICKUPS.bucket, "t", "60")] == 1
    assert values[(PICKUPS.bucket, "t", "0.005")] == 1
    assert values[(DURATIONS.count, "t", "")] == 2
    assert values[(DURATIONS.bucket, "t", "0.5")] == 1
    assert values[(DURATIONS.bucket, "t", "10")] == 1
