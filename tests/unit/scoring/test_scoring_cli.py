"""`dominus scoring config [--json]`, run in process (no database needed): every
effective value and the price table; bad settings or a bad price file are one line, exit 2."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from dominus.scoring.settings import SETTINGS
from tests.support.cli import run_in_process


def dominus(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SCORING_", "TLD_"))}
    code, stdout, stderr = run_in_process(
        args,
        {**clean, "DATABASE_URL": f"sqlite:///{tmp_path}/unused.db", **env},
        tmp_path,  # no .env file here
    )
    return subprocess.CompletedProcess(args, code, stdout, stderr)


def test_config_json_shows_every_value_and_the_price_table(tmp_path: Path) -> None:
    result = dominus(tmp_path, "scoring", "config", "--json", SCORING_HOLDING_YEARS="4")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    values = {row["variable"]: row["value"] for row in document["settings"]}
    assert set(values) == {s.env for s in SETTINGS} | {"TLD_PRICES_PATH", "REGISTRAR_PRICES_PATH"}
    assert values["SCORING_HOLDING_YEARS"] == 4
    assert values["SCORING_MIN_COMPARABLES"] == 3
    table = document["price_table"]
    assert table["source"] == "the bundled tld_prices.csv"
    assert table["path"].endswith("tld_prices.csv")
    assert table["iana_tld_list"].startswith("Version ")
    assert {"tld": "com", "registration": 10.46, "renewal": 10.46} in table["prices"]


def test_config_text_marks_what_differs_from_the_default(tmp_path: Path) -> None:
    prices = tmp_path / "prices.csv"
    prices.write_text("tld,registration,renewal,currency\ncom,9,12,USD\n")
    result = dominus(
        tmp_path, "scoring", "config", SCORING_SALE_COMMISSION="0.3", TLD_PRICES_PATH=str(prices)
    )
    assert result.returncode == 0, result.stderr
    line = next(x for x in result.stdout.splitlines() if "SCORING_SALE_COMMISSION" in x)
    assert line.startswith("*") and "= 0.3" in line and "(default 0.2)" in line
    assert f"from TLD_PRICES_PATH {prices}" in result.stdout


@pytest.mark.parametrize(
    ("env", "fragment"),
    [
        ({"SCORING_SALE_COMMISSION": "-0.1"}, "SCORING_SALE_COMMISSION='-0.1'"),
        ({"SCORING_MIN_SEARCH_VOLUME": "-5"}, "SCORING_MIN_SEARCH_VOLUME"),
        ({"DEFAULT_RENEWAL_COST": "10"}, "DEFAULT_RENEWAL_COST is no longer read"),
    ],
)
def test_bad_settings_exit_2_naming_the_variable(
    tmp_path: Path, env: dict[str, str], fragment: str
) -> None:
    result = dominus(tmp_path, "scoring", "config", **env)
    assert result.returncode == 2
    assert fragment in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("tld,registration,renewal,currency\nzz-top,1,1,USD\n", "line 2: tld 'zz-top'"),
        ("tld,registration,renewal,currency\ncom,1,-1,USD\n", "line 2: renewal '-1'"),
        ('tld,registration,renewal,currency\n"com,1,1,USD\n', "line 2: a quote is not closed"),
    ],
)
def test_a_bad_price_file_exits_2_naming_file_and_line(
    tmp_path: Path, content: str, fragment: str
) -> None:
    prices = tmp_path / "prices.csv"
    prices.write_text(content)
    result = dominus(tmp_path, "scoring", "config", TLD_PRICES_PATH=str(prices))
    assert result.returncode == 2
    assert f"{prices}, {fragment}" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_every_command_refuses_bad_scoring_settings_at_start_up(tmp_path: Path) -> None:
    result = dominus(tmp_path, "jobs", "list", SCORING_BUY_MAX_RATIO="2")
    assert result.returncode == 2
    assert "SCORING_BUY_MAX_RATIO" in result.stderr
