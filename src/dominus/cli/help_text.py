"""How `--help` reads: one paragraph each, a listing line each, no type tag on a flag.

The commands' docstrings are hard-wrapped at the source's width, and Rich keeps those line ends
where the terminal wraps again, so a paragraph broke mid-sentence; a command's whole first
paragraph stood in its group's listing, over three or four lines. The root group (cli/main.py)
tidies each command as it is loaded (cli/lazy.py loads a command when it is first needed):

- each paragraph of a help text is joined into one line (paragraphs stay apart), for Rich to
  wrap at the terminal's width;
- each command gets a short help for its group's listing: its first sentence when that fits a
  line at 80 columns, else the line written for it in SHORT_HELP;
- a boolean flag shows no `<bool>` type tag (it takes no value).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import typer

# The listing's line for commands whose first sentence is longer than a line at 80 columns
# (the test renders every group at 80 columns and holds each to one line).
SHORT_HELP = {
    "scheduler": "Enqueue each fire of each enabled schedule, exactly once.",
    "demo": "Run diagnostic jobs with one worker and show what happened.",
    "score": "Appraise names as a pipeline run would score them.",
    "db": "Database schema: migrations, and a copy to another database.",
    "db upgrade": "Apply every pending migration.",
    "db current": "The database's schema revision and the one expected.",
    "db copy": "Copy every DOMINUS table to another database.",
    "jobs show": "A job: its fields, result, last error and events.",
    "jobs wait": "Wait for a job to finish, showing its progress.",
    "dlq purge": "Delete dead-letter entries (their jobs stay).",
    "queues list": "Every queue with active jobs or paused, and default.",
    "keys list": "Every rate-limit key configured or paused, and until when.",
    "portfolio import": "Import names from a registrar's or marketplace's CSV.",
    "thresholds rollback": "Activate a copy of an earlier threshold set.",
    "valuation": "The value model: fit, measure, appraise names.",
    "jobs cancel": "Cancel a job (a running one when its worker notices).",
    "jobs retry": "Put a failed or cancelled job back to pending.",
    "dlq requeue": "Put the entry's job back to pending, attempts reset.",
    "queue stats": "Counts, latency, oldest pending age and live workers.",
    "queues pause": "Stop every worker from claiming the queue's jobs.",
    "runs show": "A run: status, stages, summary and its candidates.",
    "runs candidates": "The run's candidates in ranking order, with reasons.",
    "rdap refresh": "Download IANA's RDAP bootstrap and replace the copy.",
    "scoring config": "Every SCORING_* value in effect and the TLD prices.",
    "schedules list": "Every schedule: cron, state, fires and last job.",
    "schedules run": "Enqueue the schedule's job now.",
    "schedules enable": "Let the schedule fire again.",
    "schedules disable": "Stop the schedule from firing until enabled again.",
    "maintenance": "Backups, restore, vacuum and pruning of expired rows.",
    "maintenance backup": "Back up the database into BACKUP_DIR (verified).",
    "maintenance vacuum": "Check and compact the database.",
    "maintenance prune": "Delete the rows past their retention.",
    "portfolio": "Names held, renewals, verdicts, imports, ledger.",
    "portfolio add": "Add a name to the portfolio.",
    "portfolio remove": "Delete an entry and its history (a mistake undone).",
    "portfolio verdicts": "Judge every active name as of now.",
    "portfolio rescore": "Appraise the names again and refresh their verdicts.",
    "portfolio sold": "Close an entry as sold and record the sale.",
    "portfolio drop": "Close an entry as dropped (not renewed).",
    "portfolio report": "Renewals, money at risk, profit and ROI, verdicts.",
    "outcomes import": "Import outcomes from a CSV file, all or none.",
    "backtest": "Backtest on recorded sales; tune weights; calibrate.",
    "backtest build": "Build the snapshot, report and suggestion here.",
    "backtest report": "The report of the snapshot.",
    "backtest suggest-weights": "Suggest weights from the snapshot (a dry run).",
    "backtest calibrate": "Find thresholds that reach the target precision.",
    "backtest demo": "Build a snapshot from the bundled SAMPLE outcomes.",
    "weights show": "The weights scoring uses now, and their source.",
    "weights rollback": "Activate a copy of an earlier weight set.",
    "thresholds show": "The decision thresholds scoring uses now.",
    "watchlist list": "Every watched domain, its status and drop date.",
    "watchlist poll": "Poll the entries that are due now, in this process.",
    "alerts list": "Open renewal alerts, the most severe first.",
    "alerts ack": "Acknowledge an alert, or every open one with --all.",
    "marks import": "Merge an office's bulk file into the marks file.",
    "valuation fit": "Fit the value model on sales files.",
    "valuation evaluate": "Measure the model on a sales file.",
    "valuation appraise": "Wholesale and retail values of each name.",
}
# The longest first sentence taken as it is (the narrowest listing at 80 columns has room for
# about 58 characters beside its longest command name).
SHORT_HELP_WIDTH = 56
_SENTENCE = re.compile(r"(.+?\.)(?:\s|$)")


def paragraphs(text: str) -> str:
    """Each paragraph of `text` on one line, paragraphs apart; `\\b` blocks (Click's mark for
    text to keep as written) untouched."""
    kept = []
    for paragraph in re.split(r"\n\s*\n", text.strip()):
        if paragraph.startswith("\b"):
            kept.append(paragraph)
        else:
            kept.append(_joined(line.strip() for line in paragraph.splitlines()))
    return "\n\n".join(kept)


def _joined(lines: Iterable[str]) -> str:
    """Lines joined by spaces, but after a slash (`--price/` then `--age`): one word."""
    text = ""
    for line in lines:
        text += line if not text or text.endswith("/") else " " + line
    return text


def short_help(path: str, help_text: str) -> str | None:
    """The listing's line: SHORT_HELP's, else the first sentence when it fits (None: none
    fits, and the test names the command)."""
    if path in SHORT_HELP:
        return SHORT_HELP[path]
    first = paragraphs(help_text).split("\n\n")[0]
    found = _SENTENCE.match(first)
    sentence = (found.group(1) if found else first).strip()
    return sentence if len(sentence) <= SHORT_HELP_WIDTH + 1 else None


def tidy(command: Any, path: str = "") -> None:
    """Tidy `command` and every command below it (see the module's docstring)."""
    tidy_one(command, path)
    for name, sub in getattr(command, "commands", {}).items():
        tidy(sub, f"{path} {name}".strip())


def tidy_one(command: Any, path: str = "") -> None:
    """Tidy `command` itself, not the commands below it (a lazy group's are not loaded yet)."""
    if command.help:
        command.help = paragraphs(command.help)
        if path and not command.short_help:
            command.short_help = short_help(path, command.help)
    for param in [*command.params, command.get_help_option(typer.Context(command))]:
        if param is not None and getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""  # Typer's type column shows the metavar, else `<bool>`
