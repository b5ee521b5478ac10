"""Candidate listings as CSV: every column of the JSON, one row per document, a header row,
RFC 4180 quoting, UTF-8 with a BOM, CRLF, and the formula-injection guard (a text cell starting
with `=`, `+`, `-` or `@` gets a `'`; a number never does). Checked by parsing the output back
with `csv`."""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from typing import Any

import pytest

from dominus.pipeline.csv_export import CsvExport, cell, columns_of, flatten

DOCUMENTS: list[dict[str, Any]] = [
    {
        "domain": "homegym.com",
        "tier": "recommended",
        "expected_profit": 30.1,
        "recommended": True,
        "signals": {"intrinsic": 0.92, "expiry": None},
        "details": {
            "evidence": {"keyword": None, "sales": 4},
            "market": {"sales": [{"domain": "gymathome.com", "shared_words": ["gym", "home"]}]},
            "empty": {},
        },
    },
    {
        "domain": "quietkitchen.net",
        "tier": "rejected",
        "expected_profit": -128.41,
        "recommended": False,
        "signals": {"intrinsic": 0.5, "expiry": 0.1},
        "details": {
            "evidence": {"keyword": {"monthly_volume": 880, "cpc": 0.0}, "sales": 0},
            "market": {"sales": []},
            "empty": {},
        },
    },
    {"domain": None, "input": '=HYPERLINK("http://evil.example","x")', "stage": "generate"},
]


def export(documents: list[dict[str, Any]]) -> tuple[bytes, CsvExport]:
    exporter = CsvExport(lambda: iter(documents))
    return "".join(exporter.chunks()).encode("utf-8"), exporter


def parse(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))


def test_nested_objects_become_dotted_columns() -> None:
    flat = flatten(DOCUMENTS[0])
    assert flat["signals.intrinsic"] == 0.92
    assert flat["details.evidence.keyword"] is None
    assert flat["details.market.sales"] == [
        {"domain": "gymathome.com", "shared_words": ["gym", "home"]}
    ]
    assert flat["details.empty"] == {}


def test_columns_are_the_union_in_the_order_first_seen() -> None:
    columns = columns_of(flatten(document) for document in DOCUMENTS)
    assert columns == [
        "domain",
        "tier",
        "expected_profit",
        "recommended",
        "signals.intrinsic",
        "signals.expiry",
        # null in the first row, an object in the second: its columns, where it was first seen
        "details.evidence.keyword.monthly_volume",
        "details.evidence.keyword.cpc",
        "details.evidence.sales",
        "details.market.sales",
        "details.empty",
        "input",
        "stage",
    ]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, ""),
        (True, "true"),
        (False, "false"),
        (1850.0, "1850.0"),
        (3, "3"),
        ("clear", "clear"),
        (["gym", "home"], '["gym", "home"]'),
        ([{"a": 1}], '[{"a": 1}]'),
        ({}, "{}"),
        ("bücher.com", "bücher.com"),
        # the formula-injection guard, applied to text cells
        ('=HYPERLINK("http://evil.example","x")', '\'=HYPERLINK("http://evil.example","x")'),
        ("+1 555", "'+1 555"),
        ("-1+2", "'-1+2"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("a=b", "a=b"),
        # numbers stay numbers, negative ones too: a spreadsheet must be able to sum them
        (-21.4, "-21.4"),
        (-1868.89, "-1868.89"),
        (-3, "-3"),
        (Decimal("-12.50"), "-12.50"),
        (0.7867832167832167, "0.7867832167832167"),
        # text that only reads as a number is still text, and still guarded
        ("-3", "'-3"),
        ("+3", "'+3"),
        # a number that is not finite is not a number a spreadsheet reads: guarded
        (float("-inf"), "'-inf"),
        (Decimal("-Infinity"), "'-Infinity"),
    ],
)
def test_cells(value: Any, text: str) -> None:
    assert cell(value) == text


def test_the_file_parses_back_with_every_column() -> None:
    data, exporter = export(DOCUMENTS)
    assert data.startswith(b"\xef\xbb\xbf")  # UTF-8 byte order mark
    assert exporter.rows == 3
    header, *rows = parse(data)
    assert header == columns_of(flatten(document) for document in DOCUMENTS)
    assert len(rows) == len(DOCUMENTS)
    first = dict(zip(header, rows[0], strict=True))
    assert first["domain"] == "homegym.com"
    assert first["expected_profit"] == "30.1"
    assert first["recommended"] == "true"
    assert first["signals.expiry"] == ""
    assert first["details.evidence.keyword.monthly_volume"] == ""  # null object: empty cells
    assert first["details.market.sales"] == (
        '[{"domain": "gymathome.com", "shared_words": ["gym", "home"]}]'
    )
    assert first["input"] == ""  # a field the row does not have
    second = dict(zip(header, rows[1], strict=True))
    assert second["expected_profit"] == "-128.41"
    assert second["details.evidence.keyword.monthly_volume"] == "880"
    assert second["details.market.sales"] == "[]"
    third = dict(zip(header, rows[2], strict=True))
    assert third["input"] == '\'=HYPERLINK("http://evil.example","x")'
    assert third["domain"] == "" and third["tier"] == ""


def test_rfc_4180_quoting_and_crlf_line_ends() -> None:
    documents = [{"text": 'say "hi", then go', "lines": "one\ntwo", "plain": "x"}]
    data, _ = export(documents)
    text = data.decode("utf-8").removeprefix("\ufeff")
    assert text == 'text,lines,plain\r\n"say ""hi"", then go","one\ntwo",x\r\n'
    assert parse(data)[1] == ['say "hi", then go', "one\ntwo", "x"]
    injected, _ = export([DOCUMENTS[2]])
    line = injected.decode("utf-8").split("\r\n")[1]
    assert line == ',"\'=HYPERLINK(""http://evil.example"",""x"")",generate'


def test_no_rows_is_an_empty_header() -> None:
    data, exporter = export([])
    assert data == b"\xef\xbb\xbf\r\n"
    assert exporter.rows == 0


def test_large_exports_come_in_chunks() -> None:
    documents = [{"domain": f"name{i}.com", "n": i} for i in range(450)]
    chunks = list(CsvExport(lambda: iter(documents)).chunks())
    assert len(chunks) == 3  # every 200 rows, then the rest
    assert len(parse("".join(chunks).encode("utf-8"))) == 451
