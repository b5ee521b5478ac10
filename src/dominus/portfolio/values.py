"""Reading the values people type or registrars export: amounts, dates, names, costs.

Each parser returns the value or raises `ValueError` with the reason in words; the caller adds
where it came from (an option, a line and column of a CSV file)."""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime
from typing import Literal

from dominus.domain_names import InvalidNameError, normalise_domain
from dominus.portfolio.model import MAX_AMOUNT

_CURRENCY_MARKS = re.compile(r"^(?:[A-Za-z]{3}|[$€£¥])\s*|\s*(?:[A-Za-z]{3}|[$€£¥])$")
_ISO_DATE = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ].*)?$")
_YEAR_FIRST = re.compile(r"^(\d{4})[/.](\d{1,2})[/.](\d{1,2})(?:\s.*)?$")
_YEAR_LAST = re.compile(r"^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})(?:\s.*)?$")
_EPOCH = re.compile(r"^\d{9,10}$")
_MONTH_NAMES = ("%b %d %Y", "%b %d, %Y", "%d %b %Y", "%B %d %Y", "%B %d, %Y", "%d %B %Y")


def parse_amount(text: str, *, decimal_comma: bool = False) -> float:
    """`$ 18.99`, `1,250.00`, `1.250,00` (with `decimal_comma`), `EUR 12`: a finite amount ≥ 0.

    Without `decimal_comma` a comma is a thousands separator and must group three digits
    (`1,250`); a lone comma before one or two digits (`12,50`) is ambiguous and refused."""
    raw = text.strip()
    body = _CURRENCY_MARKS.sub("", raw).replace(" ", "").replace("\u00a0", "")
    if not body:
        raise ValueError(f"{text!r} is not an amount")
    if body.startswith("-") or body.startswith("−"):
        raise ValueError(f"{text!r} is negative")
    if decimal_comma:
        body = body.replace(".", "").replace(",", ".")
    elif "," in body:
        whole = body.split(".", 1)[0]
        if not re.fullmatch(r"\d{1,3}(,\d{3})+", whole):
            raise ValueError(
                f"{text!r}: a comma that is not a thousands separator; if it is the decimal "
                "mark, give --decimal-comma"
            )
        body = body.replace(",", "")
    if not re.fullmatch(r"\d+(\.\d+)?|\.\d+", body):
        raise ValueError(f"{text!r} is not an amount")
    value = float(body)
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite amount")
    return round(value, 2)


DateOrder = Literal["day_first", "month_first"]
_FLAG_WORDS = {
    **dict.fromkeys(("on", "true", "1", "yes", "y", "enabled"), True),
    **dict.fromkeys(("off", "false", "0", "no", "n", "disabled"), False),
}
# Registry (EPP, RFC 5731) status words: what Hexonet's `Status` holds, not the registrar's.
_EPP_STATUS = re.compile(
    r"\b(?:(?:client|server)[A-Z]\w*|pending[A-Z]\w*|(?:add|autoRenew|renew|transfer|"
    r"redemption)Period)\b"
)


def parse_flag(text: str) -> bool:
    """An export's yes/no cell: ON/OFF, true/false, 1/0, yes/no (any case)."""
    flag = _FLAG_WORDS.get(text.strip().lower())
    if flag is None:
        raise ValueError(f"{text!r} is not a yes/no value (ON/OFF, true/false, 1/0, yes/no)")
    return flag


def check_registrar_status(text: str) -> str:
    """The registrar's status for a name (`Active`, `Expired`...); a registry (EPP) status such
    as `ACTIVE clientTransferProhibited` is refused: it says what the registry allows, not
    whether the registrar still holds the name for its owner."""
    if _EPP_STATUS.search(text):
        raise ValueError(
            f"{text!r} is a registry (EPP) status, not the registrar's: map another column "
            "or leave registrar_status out"
        )
    return text


def date_order(text: str) -> DateOrder | None:
    """What one `NN/NN/YYYY` cell proves about its column's order: `1/14/2027` is month-first,
    `14/1/2027` day-first; None when it proves nothing (ambiguous, or another form)."""
    found = _YEAR_LAST.match(text.strip())
    if not found:
        return None
    first, second = int(found.group(1)), int(found.group(2))
    if first > 12 and second <= 12:
        return "day_first"
    if second > 12 and first <= 12:
        return "month_first"
    return None


def parse_date(text: str, date_format: str | None = None, order: DateOrder | None = None) -> date:
    """A calendar date. With `date_format` (strptime's, e.g. `%d/%m/%Y`) that, or ISO
    `YYYY-MM-DD` (a trailing time is ignored); otherwise ISO `YYYY-MM-DD`, `YYYY/MM/DD`, month names
    (`Dec 13 2021`), epoch seconds, or `NN/NN/YYYY` when the day cannot be mistaken for the
    month (one part above 12, or both equal) or its column's `order` is known (proven by
    another cell of the column); `03/04/2021` is refused as ambiguous otherwise."""
    raw = text.strip()
    if date_format is not None:
        return _formatted(raw, date_format)
    for pattern in (_ISO_DATE, _YEAR_FIRST):
        found = pattern.match(raw)
        if found:
            year, month, day = (int(part) for part in found.groups())
            return _date(raw, year, month, day)
    found = _YEAR_LAST.match(raw)
    if found:
        first, second, year = (int(part) for part in found.groups())
        return _year_last(text, year, first, second, order)
    if _EPOCH.match(raw):
        return datetime.fromtimestamp(int(raw), tz=UTC).date()
    words = " ".join(raw.replace(",", ", ").split()[:4]).replace(" ,", ",")
    for form in _MONTH_NAMES:
        for candidate in (words, " ".join(words.split()[:3])):
            try:
                return datetime.strptime(candidate, form).date()
            except ValueError:
                continue
    raise ValueError(f"{text!r} is not a date (give --date-format for this form)")


def _year_last(text: str, year: int, first: int, second: int, order: DateOrder | None) -> date:
    raw = text.strip()
    if first > 12 and second <= 12:
        return _date(raw, year, second, first)
    if (second > 12 and first <= 12) or first == second:
        return _date(raw, year, first, second)
    if first > 12 or second > 12:
        raise ValueError(f"{text!r} is not a date")
    if order is None:
        raise ValueError(
            f"{text!r} is ambiguous (day/month or month/day?): give --date-format, "
            "e.g. %d/%m/%Y or %m/%d/%Y"
        )
    day, month = (first, second) if order == "day_first" else (second, first)
    return _date(raw, year, month, day)


def _formatted(raw: str, date_format: str) -> date:
    iso = _ISO_DATE.match(raw)
    if iso:  # YYYY-MM-DD cannot be misread, whatever format the rest of the file uses
        year, month, day = (int(part) for part in iso.groups())
        return _date(raw, year, month, day)
    for candidate in (raw, raw.split(" ", 1)[0], raw.split("T", 1)[0]):
        try:
            return datetime.strptime(candidate, date_format).date()
        except ValueError:
            continue
    raise ValueError(f"{raw!r} does not match the date format {date_format!r}")


def _date(raw: str, year: int, month: int, day: int) -> date:
    try:
        return date(year, month, day)
    except ValueError as error:
        raise ValueError(f"{raw!r} is not a date: {error}") from None


def parse_domain(text: str) -> tuple[str, str]:
    """The name as DNS sees it and its TLD; ValueError naming the problem."""
    try:
        name = normalise_domain(text)
    except InvalidNameError as error:
        raise ValueError(f"invalid domain {text.strip()!r}: {error}") from None
    return name.ascii, name.tld


def check_amount(value: float) -> float:
    """An amount given as a number (API, code): finite and ≥ 0, in cents."""
    if not math.isfinite(value):
        raise ValueError(f"{value!r} is not a finite amount")
    if value < 0:
        raise ValueError(f"{value:g} is negative")
    if value > MAX_AMOUNT:
        raise ValueError(f"{value:,.2f} is over the largest amount, {MAX_AMOUNT:,.0f}")
    return round(value, 2)
