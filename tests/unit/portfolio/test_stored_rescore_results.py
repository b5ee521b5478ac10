"""A PORTFOLIO_RESCORE result stored before results took snake_case names is read with
today's names (`portfolio rescore --wait` prints it), and a current one is read as it is."""

from __future__ import annotations

from dominus.portfolio.rescore import RescoreResult, stored_result


def test_a_result_stored_with_the_earlier_names_reads_with_todays() -> None:
    earlier = {
        "rescored": 2,
        "unchanged": 1,
        "errors": [],
        "verdictChanges": [{"domain": "a.com", "from": "keep", "to": "drop", "reason": "r"}],
        "totalDurationMs": 12,
    }
    assert stored_result(earlier) == {
        "rescored": 2,
        "unchanged": 1,
        "errors": [],
        "verdict_changes": [{"domain": "a.com", "from": "keep", "to": "drop", "reason": "r"}],
        "total_duration_ms": 12,
    }


def test_a_current_result_reads_as_it_is() -> None:
    current = RescoreResult(rescored=1, total_duration_ms=5).to_dict()
    assert stored_result(current) == current
    assert set(current) == {
        "rescored",
        "unchanged",
        "errors",
        "verdict_changes",
        "total_duration_ms",
    }
