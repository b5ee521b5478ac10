"""`dominus score` names where its figures came from: the operator's exports as read (a Keyword
Planner download, a NameBio export, an imported marks file), the bundled sample, or nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import Cli
from tests.support.trademark_files import CaseFile, uspto_daily

PLANNER_HEADER = "Keyword\tCurrency\tAvg. monthly searches\tTop of page bid (low range)"


@pytest.fixture
def cli(tmp_path: Path, database_url: str) -> Iterator[Cli]:
    runner = Cli(tmp_path, database_url)
    yield runner
    runner.kill_leftovers()


def exports(tmp_path: Path, cli: Cli) -> dict[str, str]:
    planner = tmp_path / "Keyword Stats.csv"
    lines = [
        "Keyword Stats 2026-03-01 at 10_00_00",
        "February 1, 2025 - January 31, 2026",
        PLANNER_HEADER,
        "glimmer kettles\tUSD\t1K – 10K\t0.90",
        "quorbit tents\tUSD\t320\t",
    ]
    planner.write_bytes("\r\n".join(lines).encode("utf-16"))
    namebio = tmp_path / "namebio.csv"
    namebio.write_text(
        "domain,price_usd,date,venue\nglimmerpots.com,900,2024-09-20,GoDaddy\n"
        "kettleshop.net,400,2024-10-01,Sedo\n"
    )
    office = tmp_path / "apc.xml"
    office.write_text(uspto_daily(CaseFile("97000001", "QUORBIT")))
    marks = tmp_path / "marks.csv"
    cli.ok("marks", "import", str(office), "--to", str(marks))
    return {
        "KEYWORD_DATA_PATH": str(planner),
        "COMPS_DATA_PATH": str(namebio),
        "TRADEMARK_MARKS_PATH": str(marks),
    }


def test_the_operators_exports_are_named_with_their_rows(cli: Cli, tmp_path: Path) -> None:
    env = exports(tmp_path, cli)
    (document,) = cli.ok("score", "glimmerkettles.com", "--json", env=env).json()
    sources = document["data_sources"]
    assert sources["summary"] == (
        "keywords: your Keyword Planner file (2 rows); comps: your NameBio export (2 sales); "
        "marks: your marks file (1 marks)"
    )
    assert sources["keywords"] == {
        "kind": "file",
        "format": "keyword-planner",
        "rows": 2,
        "path": env["KEYWORD_DATA_PATH"],
        "text": "your Keyword Planner file (2 rows)",
    }
    keyword = document["score"]["evidence"]["keyword"]
    assert (keyword["monthly_volume"], keyword["cpc"]) == (1000, 0.9)  # the range's low end
    panel = cli.ok("score", "glimmerkettles.com", env=env).stdout
    assert "data: keywords: your Keyword Planner file (2 rows); comps: your NameBio" in panel


def test_without_files_each_source_says_none(cli: Cli) -> None:
    (document,) = cli.ok("score", "glimmerkettles.com", "--json").json()
    assert document["data_sources"]["summary"] == (
        "keywords: none; comps: none; marks: none (TRADEMARK_MARKS_PATH unset)"
    )


def test_the_sample_says_sample(cli: Cli) -> None:
    (document,) = cli.ok("score", "--sample", "zentrova.com", "--json").json()
    summary = document["data_sources"]["summary"]
    assert summary.startswith("keywords: sample (") and "comps: sample (" in summary
    assert "marks: sample (" in summary
