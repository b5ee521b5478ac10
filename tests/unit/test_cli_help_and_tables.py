"""`--help` at 80 columns: every command's listing line fits one line, no text is cut with `…`,
no flag shows a `<bool>` tag, and each help text is paragraphs (no line end of the source's in
mid-sentence). The CLI's tables at 80 columns keep their key column whole and fold or leave out
the others, saying which."""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer.main
from rich.table import Table
from typer.testing import CliRunner

from dominus.cli.help_text import SHORT_HELP, paragraphs
from dominus.cli.main import app
from dominus.cli.output import TablesConsole

COMMANDS = "─ Commands "


def every_command() -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []

    def walk(command: Any, path: str) -> None:
        found.append((path, command))
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}".strip())

    walk(typer.main.get_command(app), "")
    return found


COMMAND_PATHS = [path for path, _command in every_command()]


def help_at_80(path: str) -> str:
    result = CliRunner().invoke(app, [*path.split(), "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("path", COMMAND_PATHS)
def test_help_at_80_columns_is_whole_and_untagged(path: str) -> None:
    output = help_at_80(path)
    assert "…" not in output  # how Rich marks a cut text
    assert "<bool>" not in output
    assert all(len(line) <= 80 for line in output.splitlines())
    if COMMANDS not in output:
        return
    listing = output.split(COMMANDS, 1)[1].split("╰", 1)[0].splitlines()[1:]
    names = [line for line in listing if re.match(r"│ \S", line)]
    assert names and len(names) == len(listing), "a listing line wrapped:\n" + "\n".join(listing)


def test_every_help_text_is_paragraphs() -> None:
    for path, command in every_command():
        for paragraph in (command.help or "").split("\n\n"):
            assert "\n" not in paragraph or paragraph.startswith("\b"), path
    # What was `--price/--age/--backlinks/\n--wayback` in the source reads as one word.
    score = dict(every_command())["score"]
    assert "--price/--age/--backlinks/--wayback are a listing's facts" in score.help


def test_the_short_help_table_names_only_commands_that_exist() -> None:
    assert set(SHORT_HELP) <= set(COMMAND_PATHS)


def test_paragraphs_keep_paragraphs_and_marked_blocks() -> None:
    text = "One line\nwrapped here.\n\nSecond\n  paragraph.\n\n\b\nkept\n  as is"
    assert paragraphs(text) == "One line wrapped here.\n\nSecond paragraph.\n\n\b\nkept\n  as is"


def rendered(table: Table, width: int = 80, *, terminal: bool = True) -> str:
    console = TablesConsole(
        width=width, force_terminal=terminal, no_color=True, highlight=False, soft_wrap=True
    )
    with console.capture() as captured:
        console.print(table)
    return re.sub(r"\x1b\[[0-9;]*m", "", captured.get())  # a terminal's styles left out


def jobs_table(job_type: str) -> Table:
    table = Table("id", "type", "status", "attempts", "priority", "created", "finished", "error")
    table.add_row(
        "123",
        job_type,
        "cancelled",
        "3/5",
        "0",
        "2026-12-05 10:00:00",
        "2026-12-05 10:00:09",
        "ValueError: something went wrong in the handler, at length",
    )
    return table


def test_at_80_columns_the_key_columns_stay_whole_and_others_give_way() -> None:
    long_type = "portfolio.rescore_every_name_in_the_book"
    text = rendered(jobs_table(long_type))
    assert all(len(line) <= 80 for line in text.splitlines() if line[:1] in "┏┃┡│└")
    assert f"│ {long_type} │ cancelled │" in text
    assert "…" not in text
    assert "left out at this width: priority, created, finished, error" in text
    wide = rendered(jobs_table(long_type), width=200)
    assert "left out" not in wide and "ValueError: something went wrong" in wide
    # Into a pipe every column stays (folded): a script reads them all.
    piped = rendered(jobs_table(long_type), terminal=False)
    assert "left out" not in piped and f"│ {long_type} │" in piped
    assert piped.splitlines()[0].count("┳") == 7  # all eight columns, folded


def test_a_table_that_fits_is_left_as_it_is() -> None:
    table = Table("domain", "verdict", "reason")
    table.add_row("cloudnest.com", "drop", "a long reason " * 8)
    text = rendered(table)
    assert "│ cloudnest.com │" in text and "left out" not in text
    assert text.count("reason") == 1 + 8  # the heading, then each word kept over lines
