"""The `dominus` command. Errors DOMINUS raises on purpose become one line on stderr and an exit
code: 2 for bad input (unknown type or id, invalid payload or option, un-migrated database,
invalid settings), 75 when the queue is full (try again later), 1 for database failures and for
a backup or restore that failed."""

from __future__ import annotations

import logging
import sqlite3
import sys
from typing import NoReturn

import psycopg
import typer
from sqlalchemy.exc import SQLAlchemyError

from dominus.cli import (
    alerts,
    backtest,
    db,
    dlq,
    jobs,
    keys,
    maintenance,
    marks,
    outcomes,
    portfolio,
    queue,
    rdap,
    runs,
    schedules,
    scoring,
    valuation,
    watchlist,
)
from dominus.cli.demo import demo
from dominus.cli.enqueue import enqueue
from dominus.cli.help_text import HelpTidyGroup
from dominus.cli.run import run
from dominus.cli.scheduler import scheduler
from dominus.cli.score import score
from dominus.cli.serve import serve
from dominus.cli.weights import thresholds_app, weights_app
from dominus.cli.worker import worker
from dominus.db.errors import translated
from dominus.errors import (
    BackupFailedError,
    DatabaseError,
    DominusError,
    QueueFullError,
    SchemaNotMigratedError,
)

EXIT_BAD_INPUT = 2
EXIT_TRY_LATER = 75  # EX_TEMPFAIL
EXIT_FAILURE = 1

log = logging.getLogger("dominus.cli")

app = typer.Typer(
    name="dominus",
    help="DOMINUS: decision support for domain-name investors, on a durable job engine.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=HelpTidyGroup,  # one paragraph a help text, one line a listing entry
)
app.add_typer(db.app, name="db")
app.add_typer(jobs.app, name="jobs")
app.add_typer(dlq.app, name="dlq")
app.add_typer(queue.app, name="queue")
app.add_typer(queue.queues_app, name="queues")
app.add_typer(keys.app, name="keys")
app.add_typer(runs.app, name="runs")
app.add_typer(rdap.app, name="rdap")
app.add_typer(scoring.app, name="scoring")
app.add_typer(schedules.app, name="schedules")
app.add_typer(maintenance.app, name="maintenance")
app.add_typer(portfolio.app, name="portfolio")
app.add_typer(outcomes.app, name="outcomes")
app.add_typer(backtest.app, name="backtest")
app.add_typer(weights_app, name="weights")
app.add_typer(thresholds_app, name="thresholds")
app.add_typer(watchlist.app, name="watchlist")
app.add_typer(alerts.app, name="alerts")
app.add_typer(marks.app, name="marks")
app.add_typer(valuation.app, name="valuation")
app.command("worker")(worker)
app.command("scheduler")(scheduler)
app.command("enqueue")(enqueue)
app.command("demo")(demo)
app.command("serve")(serve)
app.command("run")(run)
app.command("score")(score)


# Each kind of error and its exit code, most specific first; anything else DOMINUS refuses on
# purpose (bad input, nothing found, a conflict, a configuration) is 2: nothing was done.
EXIT_CODE_OF: list[tuple[type[DominusError], int]] = [
    (QueueFullError, EXIT_TRY_LATER),
    (SchemaNotMigratedError, EXIT_BAD_INPUT),  # a command to run first, not a failure
    (DatabaseError, EXIT_FAILURE),
    (BackupFailedError, EXIT_FAILURE),
]


def exit_code_for(error: DominusError) -> int:
    return next((code for kind, code in EXIT_CODE_OF if isinstance(error, kind)), EXIT_BAD_INPUT)


def main() -> None:
    try:
        app()
    except DominusError as error:
        fail(error)
    except (SQLAlchemyError, sqlite3.Error, psycopg.Error) as error:
        fail(translated(error))  # a driver error that escaped translation: still one line


def fail(error: DominusError) -> NoReturn:
    """One `error:` line in DOMINUS's words and the exit code. A database failure's driver text
    (which names the host, user, file...) is logged just before it, at WARNING."""
    if isinstance(error, DatabaseError) and error.detail:
        log.warning("the database driver said: %s", error.detail)
    sys.stderr.write(f"error: {error.message}\n")
    sys.exit(exit_code_for(error))


if __name__ == "__main__":
    main()
