"""What an entry's fields may hold, in one model whichever way they come: the API's body (its
schemas subclass `EntryValues`), `dominus portfolio add` (through `EntryFields.checked`) and each
row of a CSV import. Checking them in one place keeps the three from drifting apart: a value one
path refuses, another must not store (PostgreSQL cannot store a NUL in text, and a registrar
longer than its column is an error there while SQLite keeps it, so a later `db copy` fails)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

NO_NUL = "^[^\x00]*$"  # PostgreSQL cannot store NUL in text
MAX_REGISTRAR_LENGTH = 200  # the column's size
MAX_NOTES_LENGTH = 10_000
MAX_AMOUNT = 1e12
Amount = Field(default=None, ge=0, le=MAX_AMOUNT, allow_inf_nan=False)


class EntryValues(BaseModel):
    """An entry's fields; a field left out (or None) is not given."""

    model_config = ConfigDict(extra="forbid")

    renewal_date: date | None = None
    acquired_at: date | None = None
    acquisition_cost: float | None = Amount
    renewal_cost: float | None = Amount
    registrar: str | None = Field(default=None, max_length=MAX_REGISTRAR_LENGTH, pattern=NO_NUL)
    list_price: float | None = Amount
    renewals_paid: float | None = Amount
    notes: str | None = Field(default=None, max_length=MAX_NOTES_LENGTH, pattern=NO_NUL)


def entry_problems(values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(field, what is wrong with it) for each value `EntryValues` refuses, in field order;
    empty when every value is acceptable."""
    try:
        EntryValues.model_validate(dict(values))
    except ValidationError as error:
        return [(str(issue["loc"][0]), _in_words(issue)) for issue in error.errors()]
    return []


def _in_words(issue: ErrorDetails) -> str:
    """Pydantic's message, except where it would show a regular expression or a bare bound."""
    context = issue.get("ctx") or {}
    kind = issue["type"]
    if kind == "string_pattern_mismatch":
        return "holds a NUL character, which cannot be stored"
    if kind == "string_too_long":
        return f"longer than {context['max_length']:,} characters"
    if kind == "greater_than_equal":
        return "negative (an amount is 0 or more)"
    if kind == "less_than_equal":
        return f"over the largest amount, {MAX_AMOUNT:,.0f}"
    if kind == "finite_number":
        return "not a finite amount"
    message: str = issue["msg"]
    return message
