"""The garbage collector's youngest-generation threshold while a worker runs."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from dominus.jobs.collector import young_generation_threshold


@pytest.fixture(autouse=True)
def interpreter_threshold() -> Iterator[None]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_the_threshold_is_raised_within_and_put_back_after() -> None:
    with young_generation_threshold(10_000):
        assert gc.get_threshold() == (10_000, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_put_back_when_the_block_raises() -> None:
    with pytest.raises(RuntimeError), young_generation_threshold(10_000):
        raise RuntimeError("handler trouble")
    assert gc.get_threshold() == (700, 10, 10)


def test_none_leaves_the_collector_alone() -> None:
    with young_generation_threshold(None):
        assert gc.get_threshold() == (700, 10, 10)


def test_a_higher_threshold_the_application_chose_is_kept() -> None:
    gc.set_threshold(50_000, 20, 20)
    with young_generation_threshold(10_000):
        assert gc.get_threshold() == (50_000, 20, 20)
    assert gc.get_threshold() == (50_000, 20, 20)


def test_collection_switched_off_stays_off() -> None:
    gc.set_threshold(0)
    with young_generation_threshold(10_000):
        assert gc.get_threshold()[0] == 0
    assert gc.get_threshold()[0] == 0


def test_a_change_made_meanwhile_is_not_undone() -> None:
    with young_generation_threshold(10_000):
        gc.set_threshold(2_000, 10, 10)
    assert gc.get_threshold() == (2_000, 10, 10)


def test_nested_workers_put_back_the_outer_threshold_last() -> None:
    with young_generation_threshold(10_000):
        with young_generation_threshold(10_000):  # already as high: nothing to undo
            assert gc.get_threshold()[0] == 10_000
        assert gc.get_threshold()[0] == 10_000
    assert gc.get_threshold() == (700, 10, 10)
