"""Store contract: the jobs an operator selects (the pending views, the search) and the bulk
actions over them (ADR 0054), on both databases. Each job is changed as its one-job action
changes it; a job the action does not take is left with the reason, and a running job is
never deleted."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from dominus.jobs import JobStatus, JobStore
from dominus.jobs.bulk_plan import plan_ids, plan_selection
from dominus.jobs.metrics_model import ENQUEUED
from dominus.jobs.model import NewJob
from dominus.jobs.selection import BulkAction, JobSelection, Waiting
from tests.support.clock import T0
from tests.support.jobs import fail, kinds

pytestmark = pytest.mark.backends("sqlite", "postgresql")

NOW = T0 + timedelta(minutes=1)


def enqueue(store: JobStore, payload: dict[str, object], **fields: object) -> int:
    job = NewJob(
        job_type=str(fields.get("job_type", "diag.noop")),
        payload=payload,
        priority=0,
        max_attempts=int(str(fields.get("max_attempts", 3))),
        run_at=T0 + timedelta(seconds=float(str(fields.get("run_in", 0)))),
    )
    [result] = store.enqueue([job], T0)
    return result.job_id


def claim_one(store: JobStore, job_id: int) -> None:
    [claimed] = store.claim("w1", ["diag.noop"], 1, T0)
    assert claimed.id == job_id


def failed_job(store: JobStore, *, retry_in: float, max_attempts: int = 3) -> int:
    job_id = enqueue(store, {"n": 1}, max_attempts=max_attempts)
    claim_one(store, job_id)
    store.settle([fail(store.get_job(job_id).claim, retry_in=retry_in)], T0)
    return job_id


def ids_of(store: JobStore, selection: JobSelection) -> list[int]:
    return sorted(job.id for job in store.find_jobs(selection, NOW, limit=100))


def test_pending_jobs_are_due_scheduled_or_retrying(store: JobStore) -> None:
    retrying = failed_job(store, retry_in=3600)  # waits out its backoff
    backoff_over = failed_job(store, retry_in=30)  # its backoff ended before NOW: due
    scheduled = enqueue(store, {"n": 2}, run_in=7200)
    due = enqueue(store, {"n": 3})
    views = {waiting: ids_of(store, JobSelection(waiting=waiting)) for waiting in Waiting}
    assert views == {
        Waiting.DUE: sorted([backoff_over, due]),
        Waiting.SCHEDULED: [scheduled],
        Waiting.RETRYING: [retrying],
    }
    assert store.count_jobs(JobSelection(status=JobStatus.PENDING), NOW) == 4
    assert store.count_jobs(JobSelection(waiting=Waiting.RETRYING), NOW) == 1


def test_the_search_reads_wildcards_and_quotes_literally(store: JobStore) -> None:
    errored = failed_job(store, retry_in=0, max_attempts=1)  # last error "boom"
    percent = enqueue(store, {"domain": "50%_off.example"})
    other = enqueue(store, {"domain": "500ff.example"})
    quoted = enqueue(store, {"note": 'said "hello"'})
    accented = enqueue(store, {"name": "Café Ünïcode"})
    assert ids_of(store, JobSelection(search="50%_")) == [percent]
    assert ids_of(store, JobSelection(search="%")) == [percent]
    assert ids_of(store, JobSelection(search="_")) == [percent]
    assert ids_of(store, JobSelection(search="500FF")) == [other]  # any case
    assert ids_of(store, JobSelection(search='"hello"')) == [quoted]
    assert ids_of(store, JobSelection(search="Café")) == [accented]
    assert ids_of(store, JobSelection(search="BOOM")) == [errored]
    assert ids_of(store, JobSelection(search="\\")) == []
    assert ids_of(store, JobSelection(search="nul\x00")) == []


def test_bulk_retry_and_cancel_take_each_job_as_its_one_job_action(store: JobStore) -> None:
    failed = failed_job(store, retry_in=0, max_attempts=1)
    running = enqueue(store, {"n": 3})
    claim_one(store, running)
    pending = enqueue(store, {"n": 2})
    retried = store.bulk(BulkAction.RETRY, [failed, pending, 999_999], NOW)
    assert retried.done == [failed]
    assert retried.skipped == {
        pending: f"job {pending} is pending; only failed or cancelled jobs can be retried",
        999_999: "no job with id 999999",
    }
    assert store.get_job(failed).status is JobStatus.PENDING
    assert store.get_job(failed).attempts == 0
    assert "retried" in kinds(store, failed)

    cancelled = store.bulk(BulkAction.CANCEL, [failed, running, pending], NOW)
    assert cancelled.done == sorted([failed, running, pending])
    assert store.get_job(pending).status is JobStatus.CANCELLED
    assert store.get_job(running).status is JobStatus.RUNNING  # its worker stops it
    assert store.get_job(running).cancel_requested_at == NOW
    again = store.bulk(BulkAction.CANCEL, [pending], NOW)
    assert again.skipped == {pending: f"job {pending} is already cancelled"}


def test_bulk_delete_never_takes_a_running_job(store: JobStore) -> None:
    dead = failed_job(store, retry_in=0, max_attempts=1)
    assert store.dead_letter_of_job(dead) is not None
    running = enqueue(store, {"n": 3})
    claim_one(store, running)
    pending = enqueue(store, {"n": 2})
    deleted = store.bulk(BulkAction.DELETE, [dead, pending, running], NOW)
    assert deleted.done == [dead, pending]
    assert deleted.skipped == {
        running: f"job {running} is running and cannot be deleted: cancel it instead"
    }
    assert [job.id for job in store.list_jobs()] == [running]
    assert store.list_dead_letters(include_requeued=True) == []  # went with its job
    plan = plan_ids(store, BulkAction.DELETE, [running])
    assert plan.ids == [] and "cancel it instead" in plan.refused[running]


def test_bulk_delete_keeps_the_enqueue_counters(store: JobStore) -> None:
    """Counters never fall when the rows they counted go, whether or not a worker folded the
    enqueues into the counters before (SQLite counts unfolded enqueues from the rows)."""
    ids = [enqueue(store, {"n": n}) for n in range(3)]
    assert store.metric_totals().counter(ENQUEUED, "diag.noop") == 3
    deleted = store.bulk(BulkAction.DELETE, ids[:2], NOW)
    assert deleted.done == ids[:2]
    assert store.metric_totals().counter(ENQUEUED, "diag.noop") == 3
    enqueue(store, {"n": 3})
    assert store.bulk(BulkAction.DELETE, [ids[2]], NOW).done == [ids[2]]
    assert store.metric_totals().counter(ENQUEUED, "diag.noop") == 4


def test_a_filter_plan_counts_what_the_action_applies_to_and_caps_it(store: JobStore) -> None:
    failed = [failed_job(store, retry_in=0, max_attempts=1) for _ in range(5)]
    enqueue(store, {"n": 2})  # pending: not retried
    plan = plan_selection(store, BulkAction.RETRY, JobSelection(), NOW, cap=2)
    assert (plan.ids, plan.matched, plan.beyond_cap, plan.excluded) == (failed[:2], 5, 3, 1)
    none = plan_selection(
        store, BulkAction.RETRY, JobSelection(status=JobStatus.PENDING), NOW, cap=2
    )
    assert (none.ids, none.matched, none.excluded) == ([], 0, 1)


def test_dead_letters_filter_by_type_and_age_and_delete_by_id(store: JobStore) -> None:
    first = failed_job(store, retry_in=0, max_attempts=1)
    later = enqueue(store, {"n": 2}, max_attempts=1)
    claim_one(store, later)
    store.settle([fail(store.get_job(later).claim)], T0 + timedelta(hours=2))
    entries = {entry.job_id: entry for entry in store.list_dead_letters()}
    assert set(entries) == {first, later}
    recent = store.list_dead_letters(failed_after=T0 + timedelta(hours=1))
    assert [entry.job_id for entry in recent] == [later]
    old = store.list_dead_letters(failed_before=T0 + timedelta(hours=1))
    assert [entry.job_id for entry in old] == [first]
    assert store.list_dead_letters(job_type="diag.other") == []
    assert len(store.list_dead_letters(job_type="diag.noop")) == 2
    assert store.delete_dead_letters([entries[first].id, 999_999]) == 1
    assert [entry.job_id for entry in store.list_dead_letters()] == [later]
    assert store.get_job(first).status is JobStatus.FAILED  # the job stays
    assert store.dead_letter_of_job(first) is None
    assert store.dead_letter_of_job(later) == entries[later]


def test_bulk_retry_leaves_a_job_whose_dedupe_key_is_taken(store: JobStore) -> None:
    """Two failed jobs of one key: the first goes back to pending, the second would be a
    second active job of that key, and is left with the reason."""
    first, second = (_failed_with_key(store, "nightly") for _ in range(2))
    outcome = store.bulk(BulkAction.RETRY, [first, second], NOW)
    assert outcome.done == [first]
    assert "another active job holds its dedupe key 'nightly'" in outcome.skipped[second]
    assert store.get_job(second).status is JobStatus.FAILED
    [entry] = store.list_dead_letters()  # the first's entry was closed by the retry
    assert entry.job_id == second


def _failed_with_key(store: JobStore, key: str) -> int:
    job = NewJob(job_type="diag.noop", payload={}, priority=0, max_attempts=1, run_at=T0)
    [result] = store.enqueue([replace(job, dedupe_key=key)], T0)
    claim_one(store, result.job_id)
    store.settle([fail(store.get_job(result.job_id).claim)], T0)
    return result.job_id
