"""`dominus marks import`: counts on stdout, the marks file where the providers find it, bad
input as one line with exit 2 and nothing written."""

from __future__ import annotations

from pathlib import Path

from dominus.providers.marks_import import IMPORTED_MARKS_PATH
from tests.support.cli import Cli, assert_bad_input
from tests.support.trademark_files import CaseFile, EuMark, euipo_download, uspto_daily


def test_import_reports_counts_and_writes_where_the_providers_look(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    source = tmp_path / "apc260301.xml"
    source.write_text(
        uspto_daily(
            CaseFile("97000001", "QUORBIT"),
            CaseFile("97000002", "GLIMMER", abandoned="20250101"),
            CaseFile("97000003", "", drawing="2000"),
        )
    )
    result = cli.ok("marks", "import", str(source))
    assert "read 3 records: imported 1, skipped 2" in result.stdout
    assert "skipped 1: dead" in result.stdout
    assert "skipped 1: not a word mark" in result.stdout
    written = tmp_path / IMPORTED_MARKS_PATH
    assert written.read_text().splitlines()[1] == "QUORBIT,Quorbit Labs LLC,USPTO,9,97000001"


def test_import_into_the_configured_file_with_a_format(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    source = tmp_path / "eutm.xml"
    source.write_text(euipo_download(EuMark("018000001", "Quorbit")))
    target = tmp_path / "mine.csv"
    result = cli.run(
        "marks",
        "import",
        str(source),
        "--format",
        "euipo-xml",
        env={"TRADEMARK_MARKS_PATH": str(target)},
    )
    assert result.code == 0, str(result)
    assert f"wrote {target}: 1 marks" in result.stdout
    assert "Quorbit,,EUIPO,9;42,018000001" in target.read_text()


def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    source = tmp_path / "broken.xml"
    source.write_text(uspto_daily(CaseFile("97000001", "QUORBIT"))[:-40])
    assert_bad_input(cli.run("marks", "import", str(source)), "broken.xml", "not well-formed XML")
    assert_bad_input(cli.run("marks", "import", str(source), "--format", "wipo"), "--format 'wipo'")
    assert_bad_input(cli.run("marks", "import", str(tmp_path / "absent.zip")), "file not found")
    assert not (tmp_path / "data").exists()
