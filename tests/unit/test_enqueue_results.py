"""`EnqueueResult.all_created` builds what `EnqueueResult(job_id, True)` builds for each id."""

from __future__ import annotations

import dataclasses
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dominus.jobs.model import EnqueueResult


@given(st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=50))
def test_all_created_are_the_results_of_each_id(job_ids: list[int]) -> None:
    made = EnqueueResult.all_created(job_ids)
    expected = [EnqueueResult(job_id, True) for job_id in job_ids]
    assert made == expected
    assert [type(result) for result in made] == [EnqueueResult] * len(job_ids)
    assert [repr(result) for result in made] == [repr(result) for result in expected]
    assert [hash(result) for result in made] == [hash(result) for result in expected]
    assert pickle.loads(pickle.dumps(made)) == expected


def test_a_result_made_in_bulk_is_still_frozen() -> None:
    [result] = EnqueueResult.all_created([7])
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.job_id = 8  # type: ignore[misc]
    assert dataclasses.replace(result, created=False) == EnqueueResult(7, False)
