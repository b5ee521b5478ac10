"""The `dominus` command. Errors DOMINUS raises on purpose become one line on stderr and an exit
code: 2 for bad input (unknown type or id, invalid payload or option, un-migrated database,
invalid settings), 75 when the queue is full (try again later), 1 for database failures and for
a backup or restore that failed.

A command's module is imported when the command runs (dominus.cli.lazy): `dominus --help`,
`queue stats` and `jobs list` start without the pipeline, the providers, the API server or the
PostgreSQL driver, which cost most of a second (tests/integration/test_cli_lazy.py holds this)."""

from __future__ import annotations

import logging
import sys
from typing import NoReturn

import typer
from typer._click import Command  # Typer's own Click, as dominus.cli.lazy uses
from typer._click.exceptions import ClickException, NoArgsIsHelpError
from typer.exceptions import Abort

from dominus.cli.help_text import tidy, tidy_one
from dominus.cli.lazy import LazyCommand, LazyGroup
from dominus.db.drivers import driver_errors
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


def _command(name: str, line: str) -> LazyCommand:
    """`dominus NAME`: the function NAME of dominus.cli.NAME."""
    return LazyCommand(name, f"dominus.cli.{name}", name, line)


def _group(name: str, line: str, module: str = "", app: str = "app") -> LazyCommand:
    """`dominus NAME ...`: the Typer app `app` of dominus.cli.MODULE (default: NAME)."""
    return LazyCommand(name, f"dominus.cli.{module or name}", app, line)


# In `dominus --help` order, each with the first paragraph of its own help (the function's
# docstring, the group's `help=`); tests/integration/test_cli_lazy.py keeps the two equal.
COMMANDS = (
    _command(
        "worker", "Run jobs. Stops gracefully on SIGTERM/SIGINT; a second signal exits at once."
    ),
    _command(
        "scheduler",
        "Enqueue each fire of each enabled schedule, exactly once however many schedulers run.\n"
        "Stops gracefully on SIGTERM/SIGINT; a second signal exits at once.",
    ),
    _command("enqueue", "Enqueue a job and print its id (or the job, with --json)."),
    _command(
        "demo",
        "Enqueue diagnostic jobs (no-ops, sleeps, flaky and broken jobs) on the configured\n"
        "database and run one worker until every one has finished; then print what happened.",
    ),
    _command(
        "serve",
        "Serve the REST API (/api/v1, OpenAPI at /api/v1/docs). SIGTERM/SIGINT stop the server,\n"
        "the embedded worker and scheduler gracefully; a second signal exits at once.",
    ),
    _command(
        "run",
        "Run the five-stage pipeline. By default it is enqueued (a worker runs it) and its ids "
        "are\nprinted. Exit code with --sync/--wait: 0 success, 1 failed or degraded, 3 cancelled.",
    ),
    _command(
        "score",
        "Appraise each DOMAIN as a pipeline run would score it: signals and their evidence, EV,\n"
        "buy max, the money gate, confidence, tier and its reason. --price/--age/--backlinks/\n"
        "--wayback are a listing's facts (one DOMAIN; the closeout CSV's ranges) and make the "
        "name a\npurchase. The trademark gate runs with the configured marks. Bad input: one "
        "line, exit 2.",
    ),
    _group("db", "Database schema: apply and inspect migrations; copy to another database."),
    _group("jobs", "Inspect and manage jobs."),
    _group("dlq", "Jobs that exhausted their attempts."),
    _group("queue", "The queue as a whole."),
    _group("queues", "Named queues: list, pause, resume.", module="queue", app="queues_app"),
    _group("keys", "Rate-limit keys: list, resume a paused one."),
    _group("runs", "Follow and inspect pipeline runs."),
    _group("rdap", "The RDAP bootstrap."),
    _group("scoring", "The scoring engine's settings."),
    _group("schedules", "The cron schedules and their last jobs."),
    _group(
        "maintenance", "Backups (with retention), restore, vacuum, and pruning of expired rows."
    ),
    _group(
        "portfolio",
        "The portfolio: names held, renewals, verdicts (keep/drop/reprice), imports, ledger.",
    ),
    _group("outcomes", "Outcomes: sales, drops and expiries, for the backtest."),
    _group(
        "backtest", "Backtest the engine on recorded sales; suggest and tune weights; calibrate."
    ),
    _group(
        "weights",
        "The signal weight sets: active, history, rollback.",
        module="weights",
        app="weights_app",
    ),
    _group(
        "thresholds",
        "Calibrated threshold sets: active, history, rollback.",
        module="weights",
        app="thresholds_app",
    ),
    _group("watchlist", "Domains watched until they can be registered."),
    _group("alerts", "Renewal alerts of the portfolio (RENEWAL_CHECK)."),
    _group("marks", "Trademark marks for the trademark gate."),
    _group("valuation", "The value model: fit it on sales, measure it, appraise names."),
)


class DominusGroup(LazyGroup):
    lazy = COMMANDS

    def prepare(self, path: str, command: Command) -> None:
        """One paragraph a help text, one line a listing entry (dominus.cli.help_text)."""
        if command is self:
            tidy_one(command)
        else:
            tidy(command, path)


app = typer.Typer(
    name="dominus",
    help="DOMINUS: decision support for domain-name investors, on a durable job engine.",
    cls=DominusGroup,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _top_level() -> None:
    """Nothing to do before a command (Typer builds a group, rather than one command, for an app
    with a callback; the commands themselves come from COMMANDS)."""


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
        # Not standalone: Click's own refusals (a bad option, a missing argument) come here to
        # be one line, as every other bad input is; every command returns None, so what comes
        # back is an exit code only from --help or an explicit exit
        code = app(standalone_mode=False)
    except ClickException as error:
        refuse_usage(error)
    except Abort:
        sys.stderr.write("Aborted!\n")
        sys.exit(1)
    except DominusError as error:
        fail(error)
    except driver_errors() as error:
        from dominus.db.errors import translated  # noqa: PLC0415 - only on a failure

        fail(translated(error))  # a driver error that escaped translation: still one line
    if isinstance(code, int):
        sys.exit(code)


def refuse_usage(error: ClickException) -> NoReturn:
    """Click's refusal as one `error:` line naming the command's help. Asked with no arguments,
    a group has printed its help already and says nothing more."""
    if isinstance(error, NoArgsIsHelpError):
        sys.exit(error.exit_code)
    context = getattr(error, "ctx", None)
    hint = f" (see `{context.command_path} --help`)" if context is not None else ""
    message = " ".join(error.format_message().split())
    sys.stderr.write(f"error: {message}{hint}\n")
    sys.exit(error.exit_code)


def fail(error: DominusError) -> NoReturn:
    """One `error:` line in DOMINUS's words and the exit code. A database failure's driver text
    (which names the host, user, file...) is logged just before it, at WARNING."""
    if isinstance(error, DatabaseError) and error.detail:
        log.warning("the database driver said: %s", error.detail)
    sys.stderr.write(f"error: {error.message}\n")
    sys.exit(exit_code_for(error))


if __name__ == "__main__":
    main()
