"""The absolute loss fits the median log price: a tail of dear sales moves a squared-loss fit
(the mean) and leaves the absolute-loss fit where most sales are."""

from __future__ import annotations

import numpy as np

from dominus.valuation.fitting import linear_fit


def _skewed_sales() -> tuple[np.ndarray, np.ndarray]:
    generator = np.random.default_rng(5)
    x = generator.uniform(-1.0, 1.0, size=(400, 1))
    target = 2.0 * x[:, 0] + generator.normal(0.0, 0.1, size=400)
    target[::10] += 5.0  # one sale in ten sold far above its kind
    return x, target


def test_the_absolute_loss_fits_the_median_not_the_mean() -> None:
    x, target = _skewed_sales()
    weights, mask = np.ones(len(target)), np.ones(1)
    squared = linear_fit(x, target, weights, 1.0, mask, "squared")
    absolute = linear_fit(x, target, weights, 1.0, mask, "absolute")

    def at_zero(fitted: tuple[float, np.ndarray, np.ndarray]) -> float:
        intercept, raw, centres = fitted
        return float(intercept - centres @ raw)

    assert abs(at_zero(absolute)) < 0.05  # where nine sales in ten are
    assert abs(absolute[1][0] - 2.0) < 0.05  # and their slope
    assert at_zero(squared) > 0.4  # pulled up by the tail (0.5 on average)


def test_the_absolute_loss_leaves_masked_columns_out() -> None:
    x, target = _skewed_sales()
    both = np.hstack([x, x**2])
    _, raw, _ = linear_fit(
        both, target, np.ones(len(target)), 1.0, np.array([1.0, 0.0]), "absolute"
    )
    assert raw[1] == 0.0
