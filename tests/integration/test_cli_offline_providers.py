"""Which files the offline providers read (ADR 0044): the user's files when set, the bundled
sample only when asked for (`--sample`, DOMINUS_PROVIDERS=sample), availability unknown with no
network, and the combinations that cannot work refused with one line, exit 2, nothing written."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import Cli, assert_bad_input

REFUSED_REGISTRATIONS = "offline providers cannot check availability"
REFUSED_SAMPLE = "the bundled sample data never mixes with your files"


@pytest.fixture
def cli(tmp_path: Path, database_url: str) -> Iterator[Cli]:
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    runner = Cli(workdir, database_url)
    yield runner
    runner.kill_leftovers()


@pytest.fixture
def user_files(tmp_path: Path) -> dict[str, str]:
    """The settings naming a user's own marks, keyword and sales files."""
    marks = tmp_path / "marks.csv"
    marks.write_text("mark,owner,registry,classes\nchatgpt,OpenAI,USPTO,9;42\n", "utf-8")
    keywords = tmp_path / "keywords.csv"
    keywords.write_text("keyword,monthly_volume,cpc\nchatgpt pro,33100,4.10\n", "utf-8")
    comps = tmp_path / "comps.csv"
    comps.write_text(
        "domain,price,currency,sale_date,venue\nchatgptplus.com,12500,USD,2024-03-01,Sedo\n",
        "utf-8",
    )
    return {
        "TRADEMARK_MARKS_PATH": str(marks),
        "KEYWORD_DATA_PATH": str(keywords),
        "COMPS_DATA_PATH": str(comps),
    }


def offline(files: dict[str, str]) -> dict[str, str]:
    return {"DOMINUS_PROVIDERS": "offline", "COLUMNS": "200"} | files


def test_an_offline_run_uses_the_users_marks_not_the_sample(
    cli: Cli, user_files: dict[str, str]
) -> None:
    """chatgptpro.com came out clear: offline mode had swapped the user's marks (which list
    `chatgpt`) for the bundled sample's."""
    ran = cli.ok("run", "-c", "chatgptpro.com", "--sync", "--json", env=offline(user_files))
    document = ran.json()
    assert document["sample_data"] is False
    assert document["summary"]["sample_data"] is False
    assert document["summary"]["trademark"] == {"blocked": 1}
    [candidate] = cli.ok("runs", "candidates", str(document["run_id"]), "--json").json()
    assert candidate["trademark"] == {"verdict": "blocked", "mark": "chatgpt"}
    assert candidate["tier"] == "rejected"
    shown = cli.ok("runs", "show", str(document["run_id"])).stdout
    assert "SAMPLE DATA" not in shown


def test_an_offline_appraisal_reads_the_users_keywords_and_leaves_availability_unknown(
    cli: Cli, user_files: dict[str, str]
) -> None:
    result = cli.ok(
        "score", "chatgptpro.com", "--check-availability", "--json", env=offline(user_files)
    )
    appraisals: list[dict[str, Any]] = result.json()
    [appraisal] = appraisals
    assert appraisal["sample_data"] is False
    assert appraisal["trademark"]["verdict"] == "blocked"
    assert appraisal["keyword_looked_up"] == "chatgpt pro"
    assert "33,100" in cli.ok("score", "chatgptpro.com", env=offline(user_files)).stdout
    # No network and no availability file: neither "available" nor "registered".
    assert appraisal["availability"]["verdict"] == "unknown", appraisal["availability"]


def test_an_offline_run_of_names_to_register_is_refused(
    cli: Cli, user_files: dict[str, str]
) -> None:
    """Without the network nothing can say a keyword or brandable name is free to register:
    refused before anything is written, with or without a keyword file."""
    with_files = cli.run("run", "-k", "chatgpt pro", "--sync", env=offline(user_files))
    assert_bad_input(with_files, REFUSED_REGISTRATIONS)
    without = cli.run("run", "-b", "zentrova", env=offline({}))
    assert_bad_input(without, REFUSED_REGISTRATIONS)
    assert cli.ok("runs", "list", "--json").json() == []


def test_the_sample_with_the_users_files_set_is_refused(
    cli: Cli, user_files: dict[str, str]
) -> None:
    only_marks = {"TRADEMARK_MARKS_PATH": user_files["TRADEMARK_MARKS_PATH"]}
    refused = cli.run("run", "--sample", "--sync", env=only_marks)
    assert_bad_input(refused, REFUSED_SAMPLE, "TRADEMARK_MARKS_PATH")
    by_setting = cli.run("run", "-k", "home gym", env={"DOMINUS_PROVIDERS": "sample"} | user_files)
    assert_bad_input(by_setting, REFUSED_SAMPLE, "KEYWORD_DATA_PATH")
    scored = cli.run("score", "--sample", "zentrova.com", env=only_marks)
    assert_bad_input(scored, REFUSED_SAMPLE)
    assert cli.ok("runs", "list", "--json").json() == []


def test_the_sample_run_still_says_sample_data(cli: Cli) -> None:
    shown = cli.ok("run", "--sample", "--sync", env={"COLUMNS": "200"}).stdout
    assert "SAMPLE DATA" in shown
    [listed] = cli.ok("runs", "list", "--json").json()
    assert listed["sample_data"] is True
    assert listed["providers"] == "sample"
