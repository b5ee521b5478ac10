"""Bodies of /api/v1/runs. Names are snake_case, as in every JSON document; the creation
request also takes the camelCase list names the dashboard contract first fixed
(`brandableNames`, `closeoutDomains`), and the answer keeps `_links`. Runs and candidates are
the models of `dominus.pipeline.documents`, which `dominus runs show --json` dumps."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from dominus.jobs.payload_options import snake_or_camel
from dominus.pipeline.documents import RunQueuedOut, RunSummaryOut
from dominus.pipeline.model import MAX_INPUT_NAMES, CloseoutDomain, NameText, check_input_size

INPUT_LISTS = ("keywords", "brandable_names", "closeout_domains")


def _at_least_one_name() -> list[JsonValue]:
    return [{"required": [name], "properties": {name: {"minItems": 1}}} for name in INPUT_LISTS]


class RunRequest(BaseModel):
    """At least one name in one of the lists (400 otherwise)."""

    # The schema says what the route checks: some list is not empty.
    model_config = ConfigDict(extra="forbid", json_schema_extra={"anyOf": _at_least_one_name()})

    keywords: list[NameText] = Field(default_factory=list, max_length=MAX_INPUT_NAMES)
    brandable_names: list[NameText] = Field(
        default_factory=list,
        max_length=MAX_INPUT_NAMES,
        validation_alias=snake_or_camel("brandable_names"),
        description="Invented names to check as they are (`brandableNames` is taken too).",
    )
    closeout_domains: list[NameText | CloseoutDomain] = Field(
        default_factory=list,
        max_length=MAX_INPUT_NAMES,
        validation_alias=snake_or_camel("closeout_domains"),
        description="Closeout or auction names, bought rather than registered: domains, or "
        "objects with the listing's facts and price (`closeoutDomains` is taken too).",
    )

    @model_validator(mode="after")
    def _not_too_big(self) -> RunRequest:
        # A blank name is no name, as `dominus run` reads its lists: a run of blanks is no run
        self.keywords = _named(self.keywords)
        self.brandable_names = _named(self.brandable_names)
        self.closeout_domains = [
            item for item in self.closeout_domains if not isinstance(item, str) or item.strip()
        ]
        check_input_size(
            len(self.keywords) + len(self.brandable_names) + len(self.closeout_domains)
        )
        return self


def _named(names: list[str]) -> list[str]:
    return [name for name in names if name.strip()]


class RunCreated(RunQueuedOut):
    """The run created: its ids, status and where to follow it."""

    model_config = ConfigDict(validate_by_name=True, serialize_by_alias=True)

    links: dict[str, str] = Field(alias="_links")


class RunPage(BaseModel):
    items: list[RunSummaryOut]
    next_cursor: int | None
