"""The JSON shapes of runs and their candidates, shared by `--json` output and the API."""

from __future__ import annotations

from typing import Any

from dominus.errors import JobNotFoundError
from dominus.jobs.model import Job, JobStatus
from dominus.jobs.store import JobStore
from dominus.pipeline.model import FINISHED_RUN_STATUSES, RunStatus
from dominus.pipeline.stage_results import REGISTRATION
from dominus.pipeline.store import RunRecord
from dominus.pipeline.tiers import evidence_summary, expected_profit, stored_final_tier


def job_of_run(jobs: JobStore, run: RunRecord) -> Job | None:
    """The run's job; None for in-process runs and for jobs pruned since (the run row remains
    the record)."""
    if run.job_id is None:
        return None
    try:
        return jobs.get_job(run.job_id)
    except JobNotFoundError:
        return None


PRUNED = "pruned"


def job_status(run: RunRecord, job: Job | None) -> str | None:
    """The run's job's status as a run shows it: "pruned" once PRUNE deleted the finished job
    (`job` None though the run names one), None for in-process runs."""
    if run.job_id is None:
        return None
    return job.status.value if job is not None else PRUNED


def effective_status(run: RunRecord, job: Job | None) -> RunStatus:
    """The run's status, corrected by its job's: a job cancelled or dead-lettered before (or
    while) its run could record it leaves the run row behind; the job table is the truth."""
    if job is None or not job.status.is_terminal:
        if run.status is RunStatus.FAILED and job is not None:
            return RunStatus.PENDING  # the job retries; the run resumes from its checkpoints
        return run.status
    if run.status in FINISHED_RUN_STATUSES and run.status is not RunStatus.FAILED:
        return run.status
    if job.status is JobStatus.CANCELLED:
        return RunStatus.CANCELLED
    if job.status is JobStatus.FAILED:
        return RunStatus.FAILED
    return run.status


def is_finished(run: RunRecord, job: Job | None) -> bool:
    return effective_status(run, job) in FINISHED_RUN_STATUSES


def run_document(run: RunRecord, job: Job | None = None) -> dict[str, Any]:
    """The run; with its whole `input` unless it was read by a listing (`input` None), which
    carries only `input_summary`, the length of each input list."""
    summary = run.summary or {}
    document = {
        "run_id": run.id,
        "job_id": run.job_id,
        "job_status": job_status(run, job),
        "status": effective_status(run, job).value,
        "degraded": run.degraded,
        "degraded_reasons": run.degraded_reasons,
        "providers": run.providers,
        "sample_data": run.providers == "offline",
        "created_at": _time(run.created_at),
        "started_at": _time(run.started_at),
        "finished_at": _time(run.finished_at),
        "stages": run.stages,
        "summary": summary,
        "error": run.error,
        "weight_set_id": run.weight_set_id,
        "weights": run.weights,
        "input_summary": run.input_counts,
    }
    if run.input is not None:
        document["input"] = run.input
    return document


def candidate_document(row: dict[str, Any]) -> dict[str, Any]:
    """A scored candidate. `tier` is final (after the trademark gate: a name it did not clear
    is rejected), `tier_reason` says why in words and `stage` which stage settled it ("score",
    or "trademark"). `expected_profit` is the money gate's figure (null when a price is
    missing), `evidence` the evidence that counted ("keyword 33,100/mo $1.25; 4 sales"; null
    when only the intrinsic signal speaks). `acquisition`: "purchase" (bought from a closeout
    or auction listing, at `listed_price` when the listing gave one) or "registration"
    (hand-registered; rows scored before purchases existed are all registrations)."""
    details = row["details"]
    final = stored_final_tier(row)
    return {
        "domain": row["domain"],
        "tier": final.tier,
        "tier_reason": final.reason,
        "stage": final.stage,
        "acquisition": details.get("acquisition", REGISTRATION),
        "listed_price": details.get("listed_price"),
        "recommended": row["recommended"],
        "expected_profit": expected_profit(details),
        "evidence": evidence_summary(details),
        "expected_value": row["expected_value"],
        "suggested_buy_max": row["suggested_buy_max"],
        "suggested_list_price": row["suggested_list_price"],
        "weighted_score": round(row["weighted_score"], 4),
        "confidence": round(row["confidence"], 4),
        "signals": {
            "intrinsic": row["intrinsic"],
            "commercial": row["commercial"],
            "market": row["market"],
            "expiry": row["expiry"],
        },
        "trademark": {"verdict": row["trademark_verdict"], "mark": row["trademark_mark"]},
        # Which source confirmed the name available: "rdap", "whois", or offline "sample"/"file".
        "availability_source": details.get("availability_source"),
        "details": details,
    }


def _time(value: Any) -> str | None:
    return value.isoformat() if value is not None else None
