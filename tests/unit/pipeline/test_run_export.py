"""The run export's default shape: a few readable columns in a fixed order, money in cents and
ratios to three decimals, numbers written as numbers; `all_columns` keeps every field."""

from __future__ import annotations

import csv
import io
from typing import Any

from dominus.pipeline.run_export import READABLE_COLUMNS, candidates_csv

SCORED: dict[str, Any] = {
    "domain": "homegym.com",
    "tier": "rejected",
    "tier_reason": "money: expected profit -1868.89 < 0",
    "stage": "score",
    "acquisition": "purchase",
    "listed_price": 1850,
    "recommended": False,
    "expected_profit": -1868.894,
    "evidence": "keyword 33,100/mo $1.25; 4 sales",
    "expected_value": 8798.9449,
    "suggested_buy_max": 144.6,
    "suggested_list_price": 237765.3,
    "weighted_score": 0.7867832167832167,
    "confidence": 0.71881,
    "signals": {"intrinsic": 0.9199999999999999},
    "trademark": {"verdict": "clear", "mark": None},
    "availability_source": "sample",
    "details": {
        "tier": "rejected",
        "value": {"retail": {"p10": 706.071, "p50": 8798.94, "p90": 237765.3}},
        "market": {"sales": [{"domain": "gymathome.com", "price": 5100.0}]},
    },
}
DROPPED: dict[str, Any] = {
    "domain": None,
    "input": "=bad..one",
    "source": "keyword",
    "acquisition": None,
    "listed_price": None,
    "stage": "generate",
    "dropped_reason": "invalid input: empty label",
}


def export(documents: list[dict[str, Any]], *, all_columns: bool = False) -> list[list[str]]:
    text = "".join(candidates_csv(lambda: iter(documents), all_columns=all_columns).chunks())
    assert text.startswith("\ufeff")
    return list(csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline="")))


def test_the_default_columns_are_few_rounded_and_readable() -> None:
    header, scored, dropped = export([SCORED, DROPPED])
    assert header == list(READABLE_COLUMNS)
    assert 12 <= len(header) <= 18
    assert len(set(header)) == len(header)  # no `tier` next to `details.tier`
    row = dict(zip(header, scored, strict=True))
    assert row == {
        "domain": "homegym.com",
        "tier": "rejected",
        "recommended": "false",
        "expected_profit": "-1868.89",  # a number, not the text '-1868.89
        "expected_value": "8798.94",
        "value_p10": "706.07",
        "value_p90": "237765.30",
        "suggested_buy_max": "144.60",
        "listed_price": "1850.00",
        "confidence": "0.719",
        "score": "0.787",
        "availability_source": "sample",
        "trademark": "clear",
        "trademark_mark": "",
        "evidence": "keyword 33,100/mo $1.25; 4 sales",
        "stage": "score",
        "reason": "money: expected profit -1868.89 < 0",
    }
    # Every cell is short: no JSON lists of sales, no long floats.
    assert all(not cell.startswith(("[", "{")) for cell in scored)
    gone = dict(zip(header, dropped, strict=True))
    assert gone["domain"] == "'=bad..one"  # the input as given, guarded
    assert (gone["stage"], gone["reason"]) == ("generate", "invalid input: empty label")
    assert gone["expected_profit"] == "" and gone["tier"] == ""


def test_no_rows_still_has_the_header() -> None:
    assert export([]) == [list(READABLE_COLUMNS)]


def test_all_columns_is_every_field_unrounded() -> None:
    header, scored = export([SCORED], all_columns=True)
    row = dict(zip(header, scored, strict=True))
    assert len(header) > len(READABLE_COLUMNS)
    assert row["weighted_score"] == "0.7867832167832167"
    assert row["details.tier"] == "rejected"
    assert row["expected_profit"] == "-1868.894"
    assert row["details.market.sales"] == '[{"domain": "gymathome.com", "price": 5100.0}]'
