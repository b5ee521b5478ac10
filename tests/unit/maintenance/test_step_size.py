"""The prune's step size: halved after a slow step, doubled back after a quick one, within
[50 rows (or the maximum, if smaller), PRUNE_BATCH_SIZE]."""

from __future__ import annotations

from dominus.maintenance.prune_rules import StepSize


def test_slow_steps_halve_the_size_down_to_the_floor() -> None:
    size = StepSize(1000, target_seconds=0.05)
    sizes = []
    for _ in range(6):
        size.observe(0.2)
        sizes.append(size.rows)
    assert sizes == [500, 250, 125, 62, 50, 50]


def test_quick_steps_grow_it_back_to_the_maximum() -> None:
    size = StepSize(1000, target_seconds=0.05)
    size.observe(1.0)
    size.observe(1.0)
    assert size.rows == 250
    size.observe(0.03)  # under the target but not quick: unchanged
    assert size.rows == 250
    grown = []
    for _ in range(3):
        size.observe(0.001)
        grown.append(size.rows)
    assert grown == [500, 1000, 1000]


def test_a_maximum_below_the_floor_is_kept() -> None:
    size = StepSize(1)
    size.observe(5.0)
    assert size.rows == 1
    size.observe(0.0)
    assert size.rows == 1
