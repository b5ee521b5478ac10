"""A Google Ads Keyword Planner download read as it is saved: UTF-16, tabs, two title lines,
ranges taken at their low end. The files are written here, with invented keywords."""

from __future__ import annotations

from pathlib import Path

import pytest

from dominus.providers.errors import ProviderDataError
from dominus.providers.keyword_data import (
    DOMINUS_CSV,
    KEYWORD_PLANNER,
    load_keyword_data,
    read_keyword_file,
)
from dominus.providers.keyword_planner import planner_volume

HEADER = [
    "Keyword",
    "Currency",
    "Avg. monthly searches",
    "Three month change",
    "YoY change",
    "Competition",
    "Competition (indexed value)",
    "Top of page bid (low range)",
    "Top of page bid (high range)",
    "Ad impression share",
    "Searches: Jan 2026",
    "Searches: Feb 2026",
]
TITLE_LINES = ["Keyword Stats 2026-03-01 at 10_00_00", '"February 1, 2025 - January 31, 2026"']


def planner_file(
    tmp_path: Path,
    rows: list[list[str]],
    *,
    encoding: str = "utf-16",
    delimiter: str = "\t",
    header: list[str] = HEADER,
) -> Path:
    """An export as Google Ads saves it: `utf-16` writes the byte-order mark (little-endian on
    this machine, as Google's files are), CRLF line ends."""
    lines = [*TITLE_LINES, delimiter.join(header), *(delimiter.join(row) for row in rows)]
    path = tmp_path / "Keyword Stats 2026-03-01 at 10_00_00.csv"
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode(encoding))
    return path


def row(keyword: str, volume: str, low: str, high: str = "", currency: str = "USD") -> list[str]:
    return [keyword, currency, volume, "0%", "0%", "Low", "12", low, high, "", "10", "20"]


def test_an_export_as_saved_is_read_with_its_figures(tmp_path: Path) -> None:
    path = planner_file(
        tmp_path,
        [
            row("Glimmer Kettles", "1900", "0.45", "2.10"),
            row("quorbit  tents", "1K – 10K", "1.05", "3.00"),
            row("zentrix boots", "", ""),
        ],
    )
    assert path.read_bytes()[:2] == b"\xff\xfe"  # as Google writes it: UTF-16 LE with its mark
    found = read_keyword_file(path)
    assert (found.format, found.rows, found.currency) == (KEYWORD_PLANNER, 3, "USD")
    kettles = found.stats["glimmer kettles"]
    assert (kettles.monthly_volume, kettles.cpc) == (1900, 0.45)  # the LOW bid, not the high
    tents = found.stats["quorbit tents"]
    assert (tents.monthly_volume, tents.cpc) == (1000, 1.05)  # a range at its low end
    boots = found.stats["zentrix boots"]
    assert (boots.monthly_volume, boots.cpc) == (0, 0.0)  # no figures: nothing claimed


@pytest.mark.parametrize(
    ("encoding", "delimiter"),
    [("utf-16-le", "\t"), ("utf-16-be", "\t"), ("utf-8-sig", "\t"), ("utf-8", ",")],
)
def test_the_same_export_resaved_another_way_still_reads(
    tmp_path: Path, encoding: str, delimiter: str
) -> None:
    path = planner_file(
        tmp_path,
        [row("glimmer kettles", "1,900", "1,250.00")],
        encoding=encoding,
        delimiter=delimiter,
    )
    if delimiter == ",":  # a comma inside a field is quoted, as a spreadsheet saves it
        path.write_text(
            path.read_text(encoding=encoding)
            .replace("1,900", '"1,900"')
            .replace("1,250.00", '"1,250.00"'),
            encoding=encoding,
        )
    stats = load_keyword_data(path)["glimmer kettles"]
    assert (stats.monthly_volume, stats.cpc) == (1900, 1250.0)


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("0 – 10", 0),
        ("10 – 100", 10),
        ("100 – 1K", 100),
        ("1K – 10K", 1000),
        ("10K-100K", 10_000),
        ("100K — 1M", 100_000),
        ("1M – 10M", 1_000_000),
        ("880", 880),
        ("12,100", 12_100),
        ("", 0),
        ("–", 0),
    ],
)
def test_volumes_and_ranges(text: str, number: int) -> None:
    assert planner_volume(Path("x.csv"), 4, text) == number


def test_the_dominus_csv_still_reads_as_before(tmp_path: Path) -> None:
    path = tmp_path / "keywords.csv"
    path.write_text("# mine\nkeyword,monthly_volume,cpc\nglimmer kettles,320,0.8\n")
    found = read_keyword_file(path)
    assert (found.format, found.rows) == (DOMINUS_CSV, 1)
    assert found.stats["glimmer kettles"].monthly_volume == 320


@pytest.mark.parametrize(
    ("rows", "problem"),
    [
        ([row("glimmer kettles", "lots", "1")], "line 4: Avg. monthly searches 'lots' is not"),
        ([row("glimmer kettles", "1K – ten", "1")], "line 4: Avg. monthly searches"),
        ([row("glimmer kettles", "10", "cheap")], "line 4: Top of page bid (low range) 'cheap'"),
        ([row("", "10", "1")], "line 4: Keyword is empty"),
        ([[*row("glimmer kettles", "10", "1"), "extra"]], "line 4: expected at most 12 fields"),
        (
            [row("glimmer kettles", "10", "1"), row("quorbit tents", "10", "1", currency="EUR")],
            "several currencies (EUR, USD)",
        ),
    ],
)
def test_a_bad_export_is_one_error_naming_the_line(
    tmp_path: Path, rows: list[list[str]], problem: str
) -> None:
    path = planner_file(tmp_path, rows)
    with pytest.raises(ProviderDataError) as caught:
        load_keyword_data(path)
    assert problem in caught.value.message


def test_a_file_that_is_neither_format_is_refused(tmp_path: Path) -> None:
    path = planner_file(tmp_path, [row("glimmer kettles", "10", "1")], header=["Term", "Volume"])
    with pytest.raises(ProviderDataError) as caught:
        load_keyword_data(path)
    assert "not a Keyword Planner export" in caught.value.message
