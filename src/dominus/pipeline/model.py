"""What a pipeline run is asked to do, and the names of its stages."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StringConstraints,
    model_validator,
)

from dominus.jobs.client import integral_floats_as_ints
from dominus.jobs.payload_options import snake_or_camel

# Names a run takes, all lists together: past this a run's stages outgrow their time budgets
# (PIPELINE_STAGE_BUDGET_MAX_MS), and its input row its purpose.
MAX_INPUT_NAMES = 100_000
# An input name: any text (stage 1 records the invalid ones), but not NUL, which PostgreSQL
# cannot store, and not longer than any domain could be after trimming.
# Strict, as everywhere in the API (`false` is not 0 backlinks), but 3.0 is 3.
Count = Annotated[int, Strict(), Field(ge=0, le=10**12), BeforeValidator(integral_floats_as_ints)]
NameText = Annotated[str, StringConstraints(min_length=1, max_length=300, pattern="^[^\x00]*$")]
# A listing's asking price, in the scoring currency (USD unless configured otherwise). The cap
# is far above any domain sale on record: a larger figure is a typo (or cents), not a price.
MAX_LISTED_PRICE = 1_000_000_000


class Stage(StrEnum):
    GENERATE = "generate"
    DNS = "dns"
    RDAP = "rdap"
    SCORE = "score"
    TRADEMARK = "trademark"


STAGES: tuple[Stage, ...] = tuple(Stage)


class RunStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


FINISHED_RUN_STATUSES = frozenset({RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED})


class CloseoutDomain(BaseModel):
    """A domain from a closeout (expiring) list or an auction, with what the list says about it.
    It is registered by definition: it is bought from the listing, not hand-registered, so the
    availability stages never drop it (ADR 0016)."""

    model_config = ConfigDict(extra="forbid")

    domain: NameText
    age: Annotated[float, Strict(), Field(ge=0, le=200)] | None = Field(
        default=None, description="Age in years."
    )
    backlinks: Count | None = None
    wayback: Count | None = Field(default=None, description="Archive snapshots.")
    price: (
        Annotated[float, Strict(), Field(ge=0, le=MAX_LISTED_PRICE, allow_inf_nan=False)] | None
    ) = Field(
        default=None,
        description="The listing's price to buy the name, in the scoring currency (USD by "
        "default); none: not listed with a price.",
    )


def check_input_size(names: int) -> None:
    if names > MAX_INPUT_NAMES:
        raise ValueError(f"a run takes at most {MAX_INPUT_NAMES:,} names in all, got {names:,}")


class RunInput(BaseModel):
    """The names a run starts from. At least one list must be non-empty."""

    model_config = ConfigDict(extra="forbid")

    keywords: list[NameText] = Field(default_factory=list, max_length=MAX_INPUT_NAMES)
    brandable: list[NameText] = Field(default_factory=list, max_length=MAX_INPUT_NAMES)
    closeout: list[CloseoutDomain] = Field(default_factory=list, max_length=MAX_INPUT_NAMES)

    @model_validator(mode="after")
    def _not_empty_nor_too_big(self) -> RunInput:
        if not (self.keywords or self.brandable or self.closeout):
            raise ValueError("give at least one keyword, brandable name or closeout domain")
        check_input_size(self.size())
        return self

    def size(self) -> int:
        return len(self.keywords) + len(self.brandable) + len(self.closeout)


class PipelineRunPayload(BaseModel):
    """The PIPELINE_RUN job's payload: the run row holds the input."""

    model_config = ConfigDict(extra="forbid")

    run_id: int = Field(ge=1, validation_alias=snake_or_camel("run_id"))


PIPELINE_RUN = "PIPELINE_RUN"
