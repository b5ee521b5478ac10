"""Bodies of /api/v1/runs. The creation request and answer use the camelCase names the
dashboard contract fixed (`runId`, `brandableNames`, `_links`); run documents are the same
snake_case documents `dominus runs show --json` prints."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from dominus.pipeline.model import MAX_INPUT_NAMES, CloseoutDomain, NameText, check_input_size


def _at_least_one_name() -> list[JsonValue]:
    return [
        {"required": [name], "properties": {name: {"minItems": 1}}}
        for name in ("keywords", "brandableNames", "closeoutDomains")
    ]


class RunRequest(BaseModel):
    """At least one name in one of the lists (400 otherwise)."""

    # The schema says what the route checks: some list is not empty.
    model_config = ConfigDict(extra="forbid", json_schema_extra={"anyOf": _at_least_one_name()})

    keywords: list[NameText] = Field(default_factory=list, max_length=MAX_INPUT_NAMES)
    brandableNames: list[NameText] = Field(  # noqa: N815 - the API's field name
        default_factory=list, max_length=MAX_INPUT_NAMES
    )
    closeoutDomains: list[NameText | CloseoutDomain] = Field(  # noqa: N815
        default_factory=list,
        max_length=MAX_INPUT_NAMES,
        description="Closeout or auction names, bought rather than registered: domains, or "
        "objects with the listing's facts and price.",
    )

    @model_validator(mode="after")
    def _not_too_big(self) -> RunRequest:
        check_input_size(len(self.keywords) + len(self.brandableNames) + len(self.closeoutDomains))
        return self


class RunCreated(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    runId: int  # noqa: N815
    jobId: int | None  # noqa: N815
    status: str
    links: dict[str, str] = Field(alias="_links")


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


class RunOut(RunSummaryOut):
    input: dict[str, Any]


class RunPage(BaseModel):
    items: list[RunSummaryOut]
    next_cursor: int | None


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
