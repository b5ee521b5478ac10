"""The JSON shapes of runs, their candidates and single-name appraisals: one pydantic model
each, which the API returns and the CLI's `--json` dumps."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from dominus.errors import JobNotFoundError
from dominus.jobs.model import Job, JobStatus
from dominus.jobs.store import JobStore
from dominus.pipeline.appraisal_result import Appraisal
from dominus.pipeline.model import FINISHED_RUN_STATUSES, RunStatus, Stage
from dominus.pipeline.stage_results import REGISTRATION, Candidate, InvalidInput
from dominus.pipeline.store import RunRecord
from dominus.pipeline.tiers import evidence_summary, expected_profit, stored_final_tier
from dominus.scoring.documents import (
    AvailabilityName,
    Closed,
    ScoreGatesOut,
    ScoreOut,
    TierName,
    WeightsOut,
)


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


class RunSummaryOut(BaseModel):
    """A run in a listing: everything but its input, which it counts."""

    run_id: int
    job_id: int | None
    job_status: str | None = Field(
        default=None,
        description="The run's job's status; `pruned` once the finished job was deleted by "
        "PRUNE (JOB_RETENTION_DAYS; the run remains the record); null for in-process runs.",
    )
    status: str
    degraded: bool
    degraded_reasons: list[str]
    providers: str
    sample_data: bool
    created_at: str
    started_at: str | None
    finished_at: str | None
    stages: dict[str, Any]
    summary: dict[str, Any]
    error: str | None
    weight_set_id: int | None
    weights: dict[str, Any] | None
    input_summary: dict[str, int] = Field(
        description="How many names each input list holds (`keywords`, `brandable`, `closeout`)."
    )

    @classmethod
    def fields_of(cls, run: RunRecord, job: Job | None) -> dict[str, Any]:
        return {
            "run_id": run.id,
            "job_id": run.job_id,
            "job_status": job_status(run, job),
            "status": effective_status(run, job).value,
            "degraded": run.degraded,
            "degraded_reasons": run.degraded_reasons,
            "providers": run.providers,
            "sample_data": run.sample_data,
            "created_at": run.created_at.isoformat(),
            "started_at": _time(run.started_at),
            "finished_at": _time(run.finished_at),
            "stages": run.stages,
            "summary": run.summary or {},
            "error": run.error,
            "weight_set_id": run.weight_set_id,
            "weights": run.weights,
            "input_summary": run.input_counts,
        }

    @classmethod
    def of(cls, run: RunRecord, job: Job | None = None) -> RunSummaryOut:
        return cls(**cls.fields_of(run, job))


def _whole_input(run: RunRecord) -> dict[str, Any]:
    if run.input is None:
        raise ValueError(f"run {run.id} was read without its input (a listing)")
    return run.input


class RunOut(RunSummaryOut):
    """The run with its whole input (`runs show --json`, `GET /runs/{id}`)."""

    input: dict[str, Any]

    @classmethod
    def of(cls, run: RunRecord, job: Job | None = None) -> RunOut:
        return cls(**cls.fields_of(run, job), input=_whole_input(run))


class RunEventOut(RunOut):
    """A `run` event of `GET /runs/{id}/stream`: the run and its job's progress."""

    progress: dict[str, Any] | None

    @classmethod
    def of(cls, run: RunRecord, job: Job | None = None) -> RunEventOut:
        progress = job.progress if job is not None else None
        return cls(**cls.fields_of(run, job), input=_whole_input(run), progress=progress)


class CandidateOut(BaseModel):
    """A scored candidate (the document of `dominus runs candidates --json`)."""

    domain: str
    tier: Literal["recommended", "speculative", "rejected"] = Field(
        description="Final: after the trademark gate, which rejects a name it did not clear. "
        "speculative: only the intrinsic signal speaks for the name (no keyword, market or "
        "expiry evidence); never a recommendation."
    )
    tier_reason: str = Field(description="Why, in words, with the figures of each gate.")
    stage: Literal["score", "trademark"] = Field(
        description="The stage that settled the tier: the trademark gate, or scoring."
    )
    acquisition: Literal["purchase", "registration"] = Field(
        description="purchase: bought from a closeout or auction listing (registered by "
        "definition, so not availability-checked); registration: hand-registered."
    )
    listed_price: float | None = Field(
        description="The listing's asking price (purchases only; null when not given)."
    )
    recommended: bool
    expected_profit: float | None = Field(
        description="The money gate's expected profit (the ranking's key); null when a price "
        "is missing."
    )
    evidence: str | None = Field(
        description='The evidence that counted, e.g. "keyword 33,100/mo $1.25; 4 sales"; '
        "null when there is none."
    )
    expected_value: float
    suggested_buy_max: float
    suggested_list_price: float
    weighted_score: float
    confidence: float
    signals: dict[str, float | None]
    trademark: dict[str, str | None]
    availability_source: str | None
    details: dict[str, Any]

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> CandidateOut:
        """A stored score row. `tier` is final (after the trademark gate: a name it did not
        clear is rejected), `stage` the stage that settled it. Rows scored before purchases
        existed are all registrations."""
        details = row["details"]
        final = stored_final_tier(row)
        return cls(
            domain=row["domain"],
            tier=final.tier,
            tier_reason=final.reason,
            stage=final.stage,
            acquisition=details.get("acquisition", REGISTRATION),
            listed_price=details.get("listed_price"),
            recommended=row["recommended"],
            expected_profit=expected_profit(details),
            evidence=evidence_summary(details),
            expected_value=row["expected_value"],
            suggested_buy_max=row["suggested_buy_max"],
            suggested_list_price=row["suggested_list_price"],
            weighted_score=round(row["weighted_score"], 4),
            confidence=round(row["confidence"], 4),
            signals={
                "intrinsic": row["intrinsic"],
                "commercial": row["commercial"],
                "market": row["market"],
                "expiry": row["expiry"],
            },
            trademark={"verdict": row["trademark_verdict"], "mark": row["trademark_mark"]},
            # Which source confirmed the name available: "rdap", "whois", or offline
            # "sample"/"file".
            availability_source=details.get("availability_source"),
            details=details,
        )


class DroppedCandidateOut(BaseModel):
    """A candidate that never got a score (listed with `all=true`): the stage that stopped it
    and why."""

    domain: str | None = Field(description="null for an input that is not a valid name.")
    input: str | None = Field(description="The input as given, for an invalid one.")
    source: Literal["keyword", "brandable", "closeout"]
    acquisition: Literal["purchase", "registration"] | None
    listed_price: float | None
    stage: Literal["generate", "dns", "rdap", "score"]
    dropped_reason: str = Field(
        description='e.g. "registered (rdap: HTTP 200)", "not checked (stage over budget)", '
        '"invalid input: ..."'
    )

    @classmethod
    def of(cls, candidate: Candidate, stage: Stage, reason: str) -> DroppedCandidateOut:
        return cls(
            domain=candidate.domain,
            input=None,
            source=candidate.source.value,
            acquisition=candidate.acquisition,
            listed_price=candidate.price,
            stage=stage.value,
            dropped_reason=reason,
        )

    @classmethod
    def invalid(cls, entry: InvalidInput) -> DroppedCandidateOut:
        return cls(
            domain=None,
            input=entry.input,
            source=entry.source.value,
            acquisition=None,
            listed_price=None,
            stage=Stage.GENERATE.value,
            dropped_reason=f"invalid input: {entry.reason}",
        )


ListedCandidateOut = CandidateOut | DroppedCandidateOut


class RunReportOut(RunOut):
    """`dominus run --json` (with --sync or --wait) and `runs wait --json`: the run, its best
    recommendations and its best speculative names."""

    recommendations: list[CandidateOut]
    speculative: list[CandidateOut]

    @classmethod
    def of_tiers(
        cls,
        run: RunRecord,
        job: Job | None,
        recommendations: Sequence[CandidateOut],
        speculative: Sequence[CandidateOut],
    ) -> RunReportOut:
        return cls(
            **cls.fields_of(run, job),
            input=_whole_input(run),
            recommendations=list(recommendations),
            speculative=list(speculative),
        )


class RunQueuedOut(BaseModel):
    """`dominus run --json` without --sync or --wait: the run enqueued."""

    run_id: int
    job_id: int | None
    status: str


class AppraisalGatesOut(ScoreGatesOut):
    trademark: bool = Field(description="Cleared by a marks source.")
    availability: bool | None = Field(
        description="Available to register; null: not checked, or a listed name (bought)."
    )


class TrademarkOut(Closed):
    checked: bool = Field(description="false: no marks source, the verdict is unverified.")
    verdict: Literal["clear", "blocked", "unverified"]
    mark: str | None
    rule: Literal["exact", "substring", "edit_distance"] | None
    source: str


class DnsAnswerOut(Closed):
    availability: AvailabilityName
    detail: str


class RdapAnswerOut(Closed):
    availability: AvailabilityName
    detail: str
    registered_at: str | None
    expires_at: str | None
    source: str = Field(description="rdap, whois, or offline sample/file.")


class AvailabilityOut(Closed):
    checked: bool = Field(description="false unless check_availability=true.")
    verdict: AvailabilityName | None
    source: str | None
    dns: DnsAnswerOut | None
    rdap: RdapAnswerOut | None
    note: str = Field(description="What was (or was not) checked, in words.")


class AppliedWeightsOut(Closed):
    weight_set_id: int | None = Field(description="null: the built-in defaults.")
    name: str | None
    weights: WeightsOut


class DataSourceOut(Closed):
    kind: Literal["file", "sample", "none"] = Field(
        description="file: the operator's own; sample: the bundled SAMPLE data; none: nothing."
    )
    format: str | None = Field(
        description="keyword-planner, namebio, report, csv or marks; null when none."
    )
    rows: int | None = Field(description="Keyword rows, sales or marks read.")
    path: str | None
    text: str = Field(description='In words, e.g. "your Keyword Planner file (1,204 rows)".')


class DataSourcesOut(Closed):
    keywords: DataSourceOut
    comps: DataSourceOut
    marks: DataSourceOut
    summary: str = Field(description='"keywords: …; comps: …; marks: …".')


class AppraisalOut(Closed):
    """One name's appraisal."""

    domain: str = Field(description="ASCII (punycode) form.")
    unicode_domain: str
    acquisition: Literal["purchase", "registration"] = Field(
        description="purchase: a listing's facts were given (bought, not registered)."
    )
    listed_price: float | None
    tier: TierName = Field(description="After the trademark (and any availability) check.")
    tier_reason: str = Field(description="Why, in words, with the figures.")
    recommended: bool
    gates: AppraisalGatesOut
    keyword_looked_up: str = Field(description="The key the keyword figures were looked up by.")
    trademark: TrademarkOut
    availability: AvailabilityOut
    weights: AppliedWeightsOut
    providers: str
    sample_data: bool = Field(description="true: figures from the bundled SAMPLE data.")
    data_sources: DataSourcesOut = Field(
        description="What the keyword figures, comparable sales and marks came from."
    )
    appraised_on: str = Field(description="The date scoring used (recency of sales), ISO 8601.")
    currency: str
    score: ScoreOut

    @classmethod
    def of(cls, appraisal: Appraisal) -> AppraisalOut:
        """The appraisal's document, checked against this description of every field."""
        return cls.model_validate(appraisal.to_dict())


def _time(value: Any) -> str | None:
    return value.isoformat() if value is not None else None
