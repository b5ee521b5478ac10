"""The portfolio's records (entries, their verdict history, outcomes, what is said about an
entry) and its errors.

What an entry's fields may hold is one model whichever way they come: the API's body (its
schemas subclass `EntryValues`), `dominus portfolio add` (through `EntryFields.checked`) and each
row of a CSV import. Checking them in one place keeps the three from drifting apart: a value one
path refuses, another must not store (PostgreSQL cannot store a NUL in text, and a registrar
longer than its column is an error there while SQLite keeps it, so a later `db copy` fails)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError
from pydantic_core import ErrorDetails

from dominus.errors import ConflictError, DominusError, InvalidInputError, NotFoundError

NO_NUL = "^[^\x00]*$"  # PostgreSQL cannot store NUL in text
MAX_REGISTRAR_LENGTH = 200  # the column's size
MAX_NOTES_LENGTH = 10_000
MAX_REGISTRAR_STATUS_LENGTH = 100  # the column's size
MAX_AMOUNT = 1e12
Amount = Field(default=None, ge=0, le=MAX_AMOUNT, allow_inf_nan=False)
# A JSON number, never a string or a boolean that happens to convert ("10", true): the API's
# callers send what they mean, and the CLI and the CSV import convert their text first
Number = Annotated[float, Strict()]


class EntryValues(BaseModel):
    """An entry's fields; a field left out (or None) is not given."""

    model_config = ConfigDict(extra="forbid")

    renewal_date: date | None = None
    acquired_at: date | None = None
    acquisition_cost: Number | None = Amount
    renewal_cost: Number | None = Amount
    registrar: str | None = Field(default=None, max_length=MAX_REGISTRAR_LENGTH, pattern=NO_NUL)
    list_price: Number | None = Amount
    renewals_paid: Number | None = Amount
    notes: str | None = Field(default=None, max_length=MAX_NOTES_LENGTH, pattern=NO_NUL)
    auto_renew: Annotated[bool, Strict()] | None = None
    registrar_status: str | None = Field(
        default=None, max_length=MAX_REGISTRAR_STATUS_LENGTH, pattern=NO_NUL
    )


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


EntryStatus = Literal["active", "sold", "dropped"]


@dataclass(frozen=True)
class TrademarkRisk:
    """A held name the trademark gate blocked at its last appraisal: the mark it matches (as
    the marks source lists it) and the gate's rule (exact, substring, edit_distance). Holding
    such a name invites a UDRP complaint, whatever it is worth."""

    mark: str
    rule: str

    def words(self) -> str:
        return f"UDRP risk: matches mark '{self.mark}' (rule: {self.rule})"

    def to_dict(self) -> dict[str, str]:
        return {"mark": self.mark, "rule": self.rule}


def trademark_risk(score_details: Mapping[str, Any] | None) -> TrademarkRisk | None:
    """The risk recorded in an entry's score details (the rescore keeps the appraisal's
    trademark gate there: `{"verdict": "blocked", "mark": ..., "rule": ...}`); None when the
    gate cleared the name, could not check it, or the name was never appraised."""
    gate = (score_details or {}).get("trademark")
    if not isinstance(gate, Mapping) or gate.get("verdict") != "blocked":
        return None
    mark, rule = gate.get("mark"), gate.get("rule")
    if not isinstance(mark, str) or not mark:
        return None
    return TrademarkRisk(mark, rule if isinstance(rule, str) and rule else "match")


Verdict = Literal["keep", "drop", "reprice"]


OutcomeType = Literal["sold", "dropped", "expired"]


@dataclass(frozen=True)
class PortfolioEntry:
    id: int
    domain: str
    tld: str
    acquired_at: date | None
    renewal_date: date
    acquisition_cost: float | None
    renewal_cost: float | None
    currency: str
    registrar: str | None
    current_score: float | None
    expected_value: float | None
    confidence: float | None
    suggested_list_price: float | None
    list_price: float | None
    score_details: dict[str, Any] | None
    verdict: Verdict | None
    verdict_reason: str | None
    verdict_at: datetime | None
    scored_at: datetime | None
    notes: str | None
    status: EntryStatus
    renewals_paid: float
    created_at: datetime
    updated_at: datetime
    # From the registrar's export; None: not known.
    auto_renew: bool | None = None
    registrar_status: str | None = None

    @property
    def expired_at_registrar(self) -> bool:
        """The registrar's export says the name has expired (its status reads `Expired`)."""
        return registrar_says_expired(self.registrar_status)

    @property
    def trademark(self) -> TrademarkRisk | None:
        return trademark_risk(self.score_details)


def registrar_says_expired(status: str | None) -> bool:
    return status is not None and "expired" in status.lower().replace(",", " ").split()


@dataclass(frozen=True)
class HistoryEvent:
    id: int
    entry_id: int
    domain: str
    kind: Literal["verdict", "sold", "dropped"]
    old_verdict: Verdict | None
    new_verdict: Verdict | None
    method: str | None
    reason: str
    at: datetime


@dataclass(frozen=True)
class Outcome:
    id: int
    domain: str
    type: OutcomeType
    sale_price: float | None
    currency: str | None
    date: date
    venue: str | None
    fees: float | None
    cost_basis: float | None
    notes: str | None
    created_at: datetime


class PortfolioError(DominusError):
    """A portfolio operation was refused (the message says why); nothing was written."""


class PortfolioInputError(PortfolioError, InvalidInputError):
    """Invalid portfolio input (the message says which value and why); nothing was written."""


class EntryStatusError(PortfolioInputError, ConflictError):
    """The entry is no longer active (sold or dropped): it cannot be sold or dropped again. (A
    conflict, answered 409; an input error too, as callers of the ledger have always caught.)"""

    code = "conflict"


class EntryNotFoundError(PortfolioError, NotFoundError):
    """No portfolio entry with that domain."""

    def __init__(self, domain: str) -> None:
        super().__init__(f"{domain} is not in the portfolio")


class EntryExistsError(PortfolioError, ConflictError):
    """The domain is already in the portfolio."""

    def __init__(self, domain: str) -> None:
        super().__init__(f"{domain} is already in the portfolio")


@dataclass(frozen=True)
class EntryFields:
    """What a person (or an import row) says about an entry; None: not given, leave as is."""

    renewal_date: date | None = None
    acquired_at: date | None = None
    acquisition_cost: float | None = None
    renewal_cost: float | None = None
    registrar: str | None = None
    list_price: float | None = None
    renewals_paid: float | None = None
    notes: str | None = None
    auto_renew: bool | None = None
    registrar_status: str | None = None

    def given(self) -> dict[str, Any]:
        return {key: value for key, value in asdict(self).items() if value is not None}

    def checked(self) -> EntryFields:
        """The values `EntryValues` accepts (the API's and the CSV import's bounds):
        PortfolioInputError naming the field and the problem otherwise."""
        problems = self.problems()
        if problems:
            field, problem = problems[0]
            raise PortfolioInputError(f"{field}: {problem}")
        return self

    def problems(self) -> list[tuple[str, str]]:
        """(field, what is wrong) for each value out of bounds."""
        return entry_problems(self.given())


@dataclass(frozen=True)
class VerdictChange:
    domain: str
    old: str | None
    new: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"domain": self.domain, "from": self.old, "to": self.new, "reason": self.reason}


@dataclass(frozen=True)
class ScoreUpdate:
    """What PORTFOLIO_RESCORE writes for one name."""

    current_score: float  # 0–100
    expected_value: float
    confidence: float
    suggested_list_price: float
    details: dict[str, Any]


def utc_today(now: datetime) -> date:
    if now.tzinfo is None:
        raise ValueError("naive datetime given where a UTC timestamp is required")
    return now.astimezone(UTC).date()


def days_until_renewal(renewal_date: date, now: datetime) -> int:
    return (renewal_date - utc_today(now)).days


def acquisition_problem(values: EntryFields, today: date) -> str | None:
    """An acquisition is a day that has been (UTC), as a sale or a drop is: a later one is a
    typing slip that would make the holding period and the ledger's figures wrong."""
    day = values.acquired_at
    return None if day is None else outcome_date_problem(day, today)


def outcome_date_problem(day: date, today: date) -> str | None:
    """The one rule for the day of a sale, drop or expiry, whichever way it is recorded (`outcomes
    add`, an outcomes import, the ledger's `sold` and `drop`, the API): not after today (UTC).
    None when the day is acceptable, else the reason in words."""
    if day > today:
        return f"date {day.isoformat()} is after today ({today.isoformat()})"
    return None


def within_horizon(days: int, horizon_days: int) -> bool:
    """Within the decision horizon: due in `horizon_days` days or fewer, past due included."""
    return days <= horizon_days
