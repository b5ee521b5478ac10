"""Every command transcript the documentation shows is true: each `console` block of README.md and
docs/ is run, command by command, against a fresh SQLite database, and what the commands print
must match what the page shows (the format: tests/support/transcripts.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.cli import Cli
from tests.support.transcripts import (
    WIDTH,
    Transcript,
    normalised,
    output_pattern,
    transcripts,
)

TRANSCRIPTS = transcripts()


def test_the_documentation_shows_transcripts() -> None:
    # A parser that found none would make the test below check nothing.
    pages = {transcript.path.name for transcript in TRANSCRIPTS}
    assert {"README.md", "getting-started.md", "backtest.md"} <= pages


@pytest.mark.parametrize("transcript", TRANSCRIPTS, ids=lambda transcript: transcript.name)
def test_transcript(transcript: Transcript, tmp_path: Path, migrated_sqlite_template: Path) -> None:
    (tmp_path / "data").mkdir()
    shutil.copyfile(migrated_sqlite_template, tmp_path / "data" / "dominus.db")
    cli = Cli(tmp_path)  # the default DATABASE_URL: ./data/dominus.db in the scratch directory
    for step in transcript.steps:
        env, args = step.env_and_args
        result = cli.run(*args, env={"COLUMNS": WIDTH} | env)
        shown = result.stdout + (result.stderr if result.code != 0 else "")
        where = f"{transcript.name}: `{step.command}` exited {result.code}"
        assert (result.code != 0) == step.expects_failure, f"{where}\n{result}"
        assert output_pattern(step.expected).fullmatch(normalised(shown)), (
            f"{where}; it printed:\n{normalised(shown)}"
        )


def test_an_ellipsis_stands_for_text_within_a_line_or_for_whole_lines() -> None:
    pattern = output_pattern(["run …: completed", "…", "done"])
    assert pattern.fullmatch("run 12: completed\na\nb\ndone\n")
    assert pattern.fullmatch("run 12: completed\ndone\n")
    assert not pattern.fullmatch("run 12: failed\ndone\n")
    assert not pattern.fullmatch("run 12: completed\ndone\nmore\n")
