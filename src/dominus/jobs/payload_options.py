"""How job payloads name their options, and the option several of them share.

Payloads name their options in snake_case, as every other JSON document does. An option the
first releases named in camelCase (`dryRun`, `minSampleSize`, `runId`) accepts that name too,
so a job stored before, a schedule written for it and a caller sending it keep working; either
way the payload is stored with the snake_case name. A payload giving both names is refused,
as it would be ambiguous."""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, Field
from pydantic.alias_generators import to_camel


def snake_or_camel(name: str) -> AliasChoices:
    """The names an option is read by: `name` (snake_case), or its camelCase spelling."""
    return AliasChoices(name, to_camel(name))


def dry_run_option(default: bool | None, description: str) -> Any:
    """`dry_run`: do the work's reading and counting, write and send nothing. One declaration
    for every job type that has it (PRUNE, WATCHLIST_POLL, WEIGHT_TUNE)."""
    return Field(
        default=default, validation_alias=snake_or_camel("dry_run"), description=description
    )
