"""`dominus valuation fit|evaluate|appraise` as a user runs them, on made-up sales."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.support.cli import run_in_process
from tests.support.made_up_sales import as_csv, made_up_sales

REPORT_KEYS = {"overall", "by_band", "by_venue_class", "by_tld_group"}
FIGURE_KEYS = {
    "n",
    "spearman",
    "median_abs_log10_error",
    "within_2x",
    "r2_log",
    "bias",
    "coverage",
}


def dominus(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"COLUMNS": "200"}
    env.pop("VALUATION_MODEL_PATH", None)
    code, stdout, stderr = run_in_process(("valuation", *args), env, cwd)
    return subprocess.CompletedProcess(args, code, stdout, stderr)


def test_fit_then_evaluate_with_stable_json_keys(tmp_path: Path) -> None:
    sales = tmp_path / "sales.csv"
    sales.write_text(as_csv(made_up_sales(200)))
    fitted = dominus("fit", str(sales), "--out", "m.json", "--json", cwd=tmp_path)
    assert fitted.returncode == 0, fitted.stderr
    document = json.loads(fitted.stdout)
    assert set(document["model"]) == {"name", "version", "trained_on"}
    held = document["metrics"]["by_source"]["sales.csv"]
    assert set(held) == {"model", "naive", "comparables"}
    assert set(held["model"]) == REPORT_KEYS
    assert set(held["model"]["overall"]) == FIGURE_KEYS
    assert (tmp_path / "m.json").exists()

    evaluated = dominus("evaluate", str(sales), "--model", "m.json", "--json", cwd=tmp_path)
    assert evaluated.returncode == 0, evaluated.stderr
    report = json.loads(evaluated.stdout)
    assert report["rows"] == 200
    assert set(report["reports"]) == {"model", "naive", "comparables"}
    assert set(report["reports"]["naive"]["overall"]) == FIGURE_KEYS

    table = dominus("evaluate", str(sales), "--model", "m.json", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    assert "Spearman" in table.stdout and "price band" in table.stdout


def test_fit_refuses_to_overwrite_and_a_bad_row_is_one_line(tmp_path: Path) -> None:
    sales = tmp_path / "sales.csv"
    sales.write_text(
        "domain,price,date,venue\nok.com,100,2024-01-01,GoDaddy\nbad.com,x,2024-01-02,Sedo\n"
    )
    bad = dominus("fit", str(sales), cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [f"error: {sales} line 3: price 'x' is not a number"]
    (tmp_path / "valuation-model.json").write_text("{}")
    sales.write_text(as_csv(made_up_sales(40)))
    exists = dominus("fit", str(sales), cwd=tmp_path)
    assert exists.returncode == 2
    assert "pass --force" in exists.stderr


def test_appraise_with_the_bundled_model(tmp_path: Path) -> None:
    names = tmp_path / "names.txt"
    names.write_text("voice.com\nagentdash.com\n")
    result = dominus("appraise", "--from-file", str(names), "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    appraisals = json.loads(result.stdout)
    assert [a["domain"] for a in appraisals] == ["voice.com", "agentdash.com"]
    for appraisal in appraisals:
        assert set(appraisal["wholesale"]) == {"p10", "p50", "p90"}
        assert set(appraisal) >= {"retail", "model", "contributions", "comparables"}


def test_bad_names_and_options_are_one_line_exit_2(tmp_path: Path) -> None:
    for args, message in [
        (("appraise", "a b.com"), "error: 'a b.com' is not a domain name"),
        (("appraise",), "error: no names: give DOMAIN arguments or --from-file"),
        (("fit", "x.csv", "--extra-weight", "nan"), "error: --extra-weight nan is not a"),
        (("fit", "x.csv", "--holdout", "1.5"), "error: --holdout 1.5 is not between 0 and 0.9"),
        (("evaluate", "missing.csv"), "error: missing.csv: no such file"),
    ]:
        result = dominus(*args, cwd=tmp_path)
        assert result.returncode == 2, (args, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(message), (args, lines)
