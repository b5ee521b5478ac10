"""Bad input found by a sweep of every command group, one test per defect: the rule is one
`error:` line on stderr, exit 2, nothing written (no row, no file, no partial import), never a
traceback, nothing lost. Each test failed on the code before its fix."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.support.cli import Cli, assert_bad_input
from tests.support.made_up_sales import as_csv, made_up_sales

BUNDLED_MODEL = Path(__file__).parents[2] / "src" / "dominus" / "valuation" / "data" / "model.json"


@pytest.fixture
def cli(tmp_path: Path, database_url: str) -> Iterator[Cli]:
    runner = Cli(tmp_path, database_url)
    yield runner
    runner.kill_leftovers()


@pytest.fixture
def bare(tmp_path: Path) -> Cli:
    """`dominus valuation ...` needs no database."""
    return Cli(tmp_path)


# --- CSV files whose quote is never closed: the rows after it are swallowed into one cell ---


def test_portfolio_import_an_unclosed_quote_loses_no_row(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "held.csv"
    path.write_text(
        "domain,renewal_date,notes\n"
        'a.com,2031-01-01,"hello\n'
        "b.com,2031-01-01,x\n"
        "c.com,2031-01-01,y\n"
    )
    # Before: exit 0, "1 added"; b.com and c.com end up inside a.com's notes.
    assert_bad_input(cli.run("portfolio", "import", str(path)), "quote")
    assert cli.ok("portfolio", "list", "--json").json() == []


def test_valuation_fit_an_unclosed_quote_loses_no_sale(bare: Cli, tmp_path: Path) -> None:
    lines = as_csv(made_up_sales(80)).splitlines()
    lines.insert(50, 'quoted.com,100,2024-01-01,"Sedo')  # every later sale lands in its venue
    sales = tmp_path / "sales.csv"
    sales.write_text("\n".join(lines) + "\n")
    # Before: exit 0, a model fitted on 50 of the 81 sales.
    assert_bad_input(bare.run("valuation", "fit", str(sales), "--out", "m.json"), "quote")
    assert not (tmp_path / "m.json").exists()


# --- valuation appraise --from-file ---


def test_valuation_appraise_names_file_not_utf8_is_one_line(bare: Cli, tmp_path: Path) -> None:
    names = tmp_path / "names.txt"
    names.write_bytes(b"voice.com\n\xff\xfe\nexample.com\n")
    # Before: a UnicodeDecodeError traceback, exit 1.
    assert_bad_input(bare.run("valuation", "appraise", "--from-file", str(names)), "UTF-8")


def test_valuation_appraise_names_file_line_that_is_no_domain_is_refused(
    bare: Cli, tmp_path: Path
) -> None:
    names = tmp_path / "names.txt"
    names.write_text("voice.com\nbad name\nexample.com\n")
    # Before: exit 0, 'bad name' silently left out (a line without a dot is skipped).
    assert_bad_input(bare.run("valuation", "appraise", "--from-file", str(names)), "bad name")


def test_valuation_appraise_refuses_an_invalid_a_label_as_score_does(bare: Cli) -> None:
    # `score`, `portfolio add`, `watchlist add` refuse it; `valuation appraise` values it.
    assert_bad_input(bare.run("valuation", "appraise", "xn--zz.com"), "xn--zz.com")


# --- valuation model files ---


def test_valuation_model_with_a_nan_figure_is_refused(bare: Cli, tmp_path: Path) -> None:
    model = json.loads(BUNDLED_MODEL.read_text())
    model["intercept"] = math.nan
    path = tmp_path / "nan-model.json"
    path.write_text(json.dumps(model))
    # Before: exit 0, "wholesale $nan ($nan–$nan)", and with --json a document with NaN (not JSON).
    result = bare.run("valuation", "appraise", "voice.com", "--model", str(path), "--json")
    assert_bad_input(result, str(path))


def test_valuation_model_of_the_wrong_shape_names_no_python_exception(
    bare: Cli, tmp_path: Path
) -> None:
    path = tmp_path / "list.json"
    path.write_text("[]")
    line = assert_bad_input(bare.run("valuation", "appraise", "voice.com", "--model", str(path)))
    # Before: "not a value model file (AttributeError(\"'list' object has no attribute 'get'\"))".
    assert "Error(" not in line and "object has no attribute" not in line, line


# --- files written over ---


def test_backtest_report_plot_does_not_overwrite_a_file_without_force(
    cli: Cli, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    # Before: exit 0 and notes.txt is replaced by a PNG (the CSV exports ask for --force).
    assert_bad_input(cli.run("backtest", "report", "--plot", str(notes)), "--force")
    assert notes.read_text() == "my notes\n"


# --- values accepted that are not values ---


def test_portfolio_add_refuses_an_acquisition_after_today(cli: Cli) -> None:
    later = (datetime.now(UTC).date() + timedelta(days=400)).isoformat()
    result = cli.run(
        "portfolio", "add", "example.com", "--renewal-date", "2031-01-02", "--acquired-at", later
    )
    # Before: exit 0; `sold`/`drop`/`outcomes add` refuse a day after today, `add` does not.
    assert_bad_input(result, later)
    assert cli.ok("portfolio", "list", "--json").json() == []


# --- Typer/Click's own refusals ---


@pytest.mark.parametrize(
    "args",
    [
        ("jobs", "list", "--limit", "0"),  # "an option out of range" (docs/cli.md)
        ("jobs", "show", "abc"),
        ("outcomes", "add", "example.com", "--date", "2024-01-02", "--price", "abc"),
    ],
)
def test_an_option_the_parser_refuses_is_one_error_line(cli: Cli, args: tuple[str, ...]) -> None:
    # Before: exit 2 but 5-6 lines: "Usage: ...", "Try ... --help", and a boxed message.
    assert_bad_input(cli.run(*args))


def test_valuation_appraise_names_file_with_a_header_and_blank_lines(
    bare: Cli, tmp_path: Path
) -> None:
    names = tmp_path / "names.csv"
    names.write_text("Domain,Note\n\nvoice.com,x\nBücher.de\n")
    result = bare.ok("valuation", "appraise", "--from-file", str(names), "--json")
    assert [item["domain"] for item in result.json()] == ["voice.com", "xn--bcher-kva.de"]


def test_backtest_report_replaces_an_earlier_plot_and_any_file_with_force(
    cli: Cli, tmp_path: Path
) -> None:
    plot = tmp_path / "plot.png"
    plot.write_bytes(b"\x89PNG\r\n\x1a\n" + b"an earlier plot")
    cli.ok("backtest", "report", "--plot", str(plot))
    assert plot.read_bytes() != b"\x89PNG\r\n\x1a\n" + b"an earlier plot"
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    cli.ok("backtest", "report", "--plot", str(notes), "--force")
    assert notes.read_bytes().startswith(b"\x89PNG")


def test_portfolio_import_refuses_an_acquisition_after_today_with_its_line(
    cli: Cli, tmp_path: Path
) -> None:
    later = (datetime.now(UTC).date() + timedelta(days=30)).isoformat()
    path = tmp_path / "held.csv"
    path.write_text(
        "domain,renewal_date,Date Purchased\n"
        "a.com,2031-01-01,2024-01-01\n"
        f"b.com,2031-01-01,{later}\n"
    )
    line = assert_bad_input(cli.run("portfolio", "import", str(path)), "line 3")
    assert "Date Purchased" in line and later in line
    assert cli.ok("portfolio", "list", "--json").json() == []
