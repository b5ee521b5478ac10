"""Bodies of /api/v1/runs. The creation request and answer use the camelCase names the
dashboard contract fixed (`runId`, `brandableNames`, `_links`); runs and candidates are the
models of `dominus.pipeline.documents`, which `dominus runs show --json` dumps."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from dominus.pipeline.documents import RunSummaryOut
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


class RunPage(BaseModel):
    items: list[RunSummaryOut]
    next_cursor: int | None
