"""What a bulk action will take before it is confirmed: the jobs named (by id, or by a filter)
that the action applies to, within the cap, and those it leaves with the reason (ADR 0054).
The dashboard's confirmation and the API's `POST /jobs/bulk` plan the same way."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from dominus.jobs.model import JobStatus
from dominus.jobs.selection import BULK_CAP, BulkAction, JobSelection, not_applicable
from dominus.jobs.store import JobStore


@dataclass(frozen=True)
class BulkPlan:
    action: BulkAction
    ids: list[int]  # the jobs the action will take, oldest first (at most the cap)
    matched: int  # the jobs named that the action applies to (may exceed the cap)
    refused: dict[int, str] = field(default_factory=dict)  # named jobs it leaves, and why
    excluded: int = 0  # a filter's jobs in states the action does not apply to
    running: list[int] = field(default_factory=list)  # named jobs that are running

    @property
    def beyond_cap(self) -> int:
        """Jobs the action applies to that this request leaves for the next one."""
        return self.matched - len(self.ids)


def plan_ids(store: JobStore, action: BulkAction, ids: Sequence[int]) -> BulkPlan:
    """The named jobs the action applies to now; the others (gone, or in another state) are
    refused with the reason."""
    wanted = sorted(set(ids))
    states = store.job_states(wanted)
    taken, refused = [], {}
    for job_id in wanted:
        status = states.get(job_id)
        if status is None:
            refused[job_id] = f"no job with id {job_id}"
        elif status in action.applies_to:
            taken.append(job_id)
        else:
            refused[job_id] = not_applicable(action, job_id, status)
    running = [job_id for job_id in wanted if states.get(job_id) is JobStatus.RUNNING]
    return BulkPlan(action, taken, len(taken), refused, running=running)


def plan_selection(
    store: JobStore,
    action: BulkAction,
    selection: JobSelection,
    now: datetime,
    cap: int | None = None,
) -> BulkPlan:
    """The filter's jobs the action applies to, the first `cap` of them (oldest first;
    default BULK_CAP)."""
    cap = BULK_CAP if cap is None else cap
    applicable = selection.only(action.applies_to)
    matched = store.count_jobs(applicable, now)
    excluded = store.count_jobs(selection, now) - matched
    ids = store.select_job_ids(applicable, now, cap) if matched else []
    return BulkPlan(action, ids, matched, excluded=excluded)
