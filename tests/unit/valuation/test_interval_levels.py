"""The intervals' price levels: each venue class's residual quantiles are taken in as many
levels as asked (equal counts by predicted price), never with fewer than MIN_LEVEL_SALES sales
a level, and the P50 shift stays one per class."""

from __future__ import annotations

import numpy as np

from dominus.valuation.fitting import MIN_LEVEL_SALES, _intervals
from dominus.valuation.venues import VenueClass


def _sales(size: int) -> tuple[np.ndarray, np.ndarray, list[VenueClass], np.ndarray]:
    """Predicted log prices 4–10; the residuals spread wider the dearer the prediction."""
    generator = np.random.default_rng(3)
    predicted = np.linspace(4.0, 10.0, size)
    spread = 0.1 + (predicted - 4.0) / 6.0
    target = predicted + generator.normal(0.0, 1.0, size) * spread
    return predicted, target, [VenueClass.WHOLESALE] * size, np.ones(size)


def test_each_class_gets_the_levels_asked_for() -> None:
    predicted, target, classes, weights = _sales(1_000)
    intervals = _intervals(predicted, target, classes, weights, True, 5)
    assert len(intervals.edges["wholesale"]) == 4
    assert len(intervals.low["wholesale"]) == len(intervals.high["wholesale"]) == 5
    assert len(set(intervals.mid["wholesale"])) == 1  # one median shift for the class


def test_a_dearer_level_gets_its_own_wider_range() -> None:
    predicted, target, classes, weights = _sales(1_000)
    intervals = _intervals(predicted, target, classes, weights, True, 5)
    width = np.subtract(intervals.high["wholesale"], intervals.low["wholesale"])
    assert width[-1] > 3 * width[0]


def test_a_level_never_has_fewer_than_the_least_sales() -> None:
    size = 3 * MIN_LEVEL_SALES + 10
    predicted, target, classes, weights = _sales(size)
    intervals = _intervals(predicted, target, classes, weights, True, 8)
    assert len(intervals.low["wholesale"]) == 3


def test_a_class_with_too_few_sales_takes_the_pooled_residuals() -> None:
    predicted, target, classes, weights = _sales(400)
    intervals = _intervals(predicted, target, classes, weights, True, 4)
    assert intervals.low["retail"] == intervals.low["wholesale"]
