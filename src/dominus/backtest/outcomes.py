"""Recording outcomes: what a name finally did (sold at a price, dropped, expired).

`OutcomeIn` is the one shape every entry point validates (the CLI's options, each CSV row, the
API's body): a valid domain (stage 1's rules, stored in ASCII), a type, a price only for a sale
(> 0, at most MAX_PRICE), a 3-letter currency (default: the scoring currency, since prices are
never converted), a date not after today, and optional venue, fees and notes. A CSV file is
validated whole before anything is written; its first bad row is the error, with its line."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict, StringConstraints, ValidationError

from dominus.backtest.model import OutcomeInputError
from dominus.domain_names import InvalidNameError, normalise_domain
from dominus.portfolio.model import outcome_date_problem
from dominus.providers.csvfiles import read_rows
from dominus.providers.errors import ProviderDataError

MAX_PRICE = 1_000_000_000.0
MAX_IMPORT_ROWS = 100_000
CSV_COLUMNS = ("domain", "type", "price", "currency", "date", "venue", "fees", "notes")

Text = Annotated[str, StringConstraints(max_length=2000, pattern="^[^\x00]*$")]


class OutcomeIn(BaseModel):
    """One outcome as given (API body, CLI options, a CSV row)."""

    model_config = ConfigDict(extra="forbid")

    domain: Annotated[
        str, StringConstraints(min_length=1, max_length=300, pattern="^[^\x00]*$")
    ] = Field(description="The name, e.g. cloudnest.com (stored in ASCII).")
    type: Literal["sold", "dropped", "expired"] = Field(default="sold")
    price: Annotated[float, Strict(), Field(gt=0, le=MAX_PRICE, allow_inf_nan=False)] | None = (
        Field(default=None, description="The sale price (sales only), in `currency`.")
    )
    currency: Annotated[str, StringConstraints(pattern="^[A-Za-z]{3}$")] | None = Field(
        default=None, description="3-letter code; default: the scoring currency."
    )
    date: dt.date = Field(description="The day of the sale, drop or expiry (YYYY-MM-DD).")
    venue: Annotated[str, StringConstraints(max_length=200, pattern="^[^\x00]*$")] | None = None
    fees: Annotated[float, Strict(), Field(ge=0, le=MAX_PRICE, allow_inf_nan=False)] | None = None
    notes: Text | None = None


def checked(outcome: OutcomeIn, today: dt.date, currency: str) -> OutcomeIn:
    """The outcome with its domain normalised and its currency set, or OutcomeInputError."""
    try:
        name = normalise_domain(outcome.domain)
    except InvalidNameError as error:
        raise OutcomeInputError(f"invalid domain {outcome.domain!r}: {error}") from None
    if outcome.price is not None and outcome.type != "sold":
        raise OutcomeInputError(f"a price is recorded with a sale, not with type {outcome.type}")
    problem = outcome_date_problem(outcome.date, today)
    if problem is not None:
        raise OutcomeInputError(problem)
    code = (outcome.currency or currency).upper()
    return outcome.model_copy(update={"domain": name.ascii, "currency": code})


def describe(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in issue['loc']) or 'outcome'}: {issue['msg']}"
        for issue in error.errors()
    )


def read_outcomes_csv(path: Path, today: dt.date, currency: str) -> list[OutcomeIn]:
    """Every row of the CSV (header: domain, date required; type, price, currency, venue,
    fees, notes optional), checked; ProviderDataError with the line for the first bad one."""
    rows: list[OutcomeIn] = []
    for line, row in read_rows(path, required=("domain", "date"), optional=CSV_COLUMNS):
        if len(rows) == MAX_IMPORT_ROWS:
            raise ProviderDataError(path, f"more than {MAX_IMPORT_ROWS:,} outcomes", line)
        values: dict[str, object] = {key: value for key, value in row.items() if value != ""}
        try:
            for number in ("price", "fees"):
                if number in values:
                    values[number] = _number(str(values[number]), number)
            outcome = OutcomeIn.model_validate(values)
            rows.append(checked(outcome, today, currency))
        except ValidationError as error:
            raise ProviderDataError(path, describe(error), line) from None
        except (OutcomeInputError, ValueError) as error:
            raise ProviderDataError(path, str(error), line) from None
    return rows


def _number(text: str, column: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{column} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{column} {text!r} is not a finite number")
    return value
