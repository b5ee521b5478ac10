"""The run export's default shape: the few columns a person sorts and filters by, rounded, in a
fixed order (ADR 0051). `--all-columns` (`all_columns=true`) keeps ADR 0017's every field.

A scored candidate fills every column; one dropped before scoring (`--all`) fills `domain` (or,
for an invalid input, the input as given), `stage` and `reason` (its `dropped_reason`), and
`listed_price` when it had one. Money is rounded to cents (written `12.50`, a number), ratios
(confidence, score) to three decimals.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from decimal import Decimal
from typing import Any

from dominus.pipeline.csv_export import CsvExport

CENT = Decimal("0.01")
RATIO_DIGITS = 3


def _path(*keys: str) -> Callable[[Mapping[str, Any]], Any]:
    def read(document: Mapping[str, Any]) -> Any:
        value: Any = document
        for key in keys:
            if not isinstance(value, Mapping):
                return None
            value = value.get(key)
        return value

    return read


def _money(read: Callable[[Mapping[str, Any]], Any]) -> Callable[[Mapping[str, Any]], Any]:
    return lambda document: cents(read(document))


def _ratio(read: Callable[[Mapping[str, Any]], Any]) -> Callable[[Mapping[str, Any]], Any]:
    return lambda document: ratio(read(document))


def cents(value: Any) -> Decimal | float | None:
    """1850 → 1850.00, -21.4 → -21.40: a number, so the CSV writes it as one (a value that is
    not finite is left as it is)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    if not math.isfinite(value):
        return float(value)
    return Decimal(repr(float(value))).quantize(CENT)


def ratio(value: Any) -> float | None:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    return round(float(value), RATIO_DIGITS)


def _domain(document: Mapping[str, Any]) -> Any:
    """The name, or for an input that is not a valid name, the input as given."""
    return document.get("domain") or document.get("input")


def _reason(document: Mapping[str, Any]) -> Any:
    return document.get("tier_reason") or document.get("dropped_reason")


# The column, and how its value is read from a candidate document. The money gate's profit, the
# value model's retail P50 (`expected_value`) and its P10/P90 range, the most to pay, the
# evidence and the gates' figures; `reason` says why in words.
READABLE_COLUMNS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "domain": _domain,
    "tier": _path("tier"),
    "recommended": _path("recommended"),
    "expected_profit": _money(_path("expected_profit")),
    "expected_value": _money(_path("expected_value")),
    "value_p10": _money(_path("details", "value", "retail", "p10")),
    "value_p90": _money(_path("details", "value", "retail", "p90")),
    "suggested_buy_max": _money(_path("suggested_buy_max")),
    "listed_price": _money(_path("listed_price")),
    "confidence": _ratio(_path("confidence")),
    "score": _ratio(_path("weighted_score")),
    "availability_source": _path("availability_source"),
    "trademark": _path("trademark", "verdict"),
    "trademark_mark": _path("trademark", "mark"),
    "evidence": _path("evidence"),
    "stage": _path("stage"),
    "reason": _reason,
}


def readable_rows(documents: Iterable[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    """Each candidate document as the readable export's row (READABLE_COLUMNS, in order)."""
    for document in documents:
        yield {name: read(document) for name, read in READABLE_COLUMNS.items()}


def candidates_csv(
    read_documents: Callable[[], Iterable[Mapping[str, Any]]], *, all_columns: bool
) -> CsvExport:
    """The run export: the readable columns, or with `all_columns` every field (ADR 0017)."""
    if all_columns:
        return CsvExport(read_documents)
    return CsvExport(lambda: readable_rows(read_documents()), columns=list(READABLE_COLUMNS))
