"""`dominus schedules ...` and the scheduler settings, as real subprocesses on a SQLite file:
the listing, runs by hand (deduplicated), enable/disable stored in the database, and bad input
(an invalid cron expression, time zone or catch-up window in the environment, an unknown or
unusable schedule): one `error:` line naming the variable or the schedule, exit 2."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dominus.jobs import SqlJobStore, utc_now
from dominus.jobs.scheduling import SchedulerInfo, ScheduleStore
from dominus.scheduling.defaults import DEFAULT_SCHEDULES
from tests.integration.test_cli import Cli, assert_bad_input

DIAG = {"DOMINUS_DIAGNOSTIC_JOBS": "1", "SCHEDULER_DIAG_CRON": "0 4 * * *"}
# Every default schedule off (the diagnostic one aside).
DEFAULTS_OFF = {default.variable: "off" for default in DEFAULT_SCHEDULES}
DEFAULT_NAMES = [
    "backup",
    "prune",
    "watchlist-poll",
    "renewal-check",
    "portfolio-rescore",
    "weight-tune",
]


@pytest.fixture
def cli(tmp_path: Path, database_url: str) -> Iterator[Cli]:
    runner = Cli(tmp_path, database_url)
    yield runner
    runner.kill_leftovers()


def test_the_default_schedules_are_listed_with_their_settings(cli: Cli) -> None:
    """Every default schedule's job type is registered now: each is enabled (weight-tune is off
    until AUTO_TUNE_ENABLED), with its cron, zone and payload from the settings."""
    schedules = cli.ok("schedules", "list", "--json").json()
    assert [schedule["name"] for schedule in schedules] == DEFAULT_NAMES
    by_name = {schedule["name"]: schedule for schedule in schedules}
    watchlist = by_name["watchlist-poll"]
    assert watchlist["cron"] == "0 */6 * * *"
    assert watchlist["timezone"] == "UTC"
    assert watchlist["job_type"] == "WATCHLIST_POLL"
    assert watchlist["next_fire_at"] is not None
    backup = by_name["backup"]
    assert (backup["job_type"], backup["state"], backup["cron"]) == (
        "BACKUP",
        "enabled",
        "0 4 * * *",
    )
    assert backup["payload"] == {"retention_days": 30, "compress": "off"}
    assert by_name["prune"]["payload"] == {
        "job_retention_days": 7,
        "dlq_retention_days": 30,
        "pipeline_run_retention_days": 180,
    }
    assert by_name["weight-tune"]["state"] == "off"  # AUTO_TUNE_ENABLED is false by default
    assert by_name["weight-tune"]["cron"] is None
    enabled = ["backup", "prune", "watchlist-poll", "renewal-check", "portfolio-rescore"]
    assert [name for name in DEFAULT_NAMES if by_name[name]["state"] == "enabled"] == enabled
    table = cli.ok("schedules", "list").stdout
    assert "portfolio-rescore" in table and "inactive" not in table


def test_settings_change_the_listing(cli: Cli) -> None:
    env = {
        "SCHEDULER_BACKUP_CRON": "off",
        "SCHEDULER_TIMEZONE": "Europe/Berlin",
        "AUTO_TUNE_ENABLED": "true",
        "AUTO_TUNE_CRON": "30 6 * * 1",
    }
    schedules = cli.ok("schedules", "list", "--json", env=env).json()
    by_name = {schedule["name"]: schedule for schedule in schedules}
    assert by_name["backup"]["state"] == "off"
    assert by_name["weight-tune"]["cron"] == "30 6 * * 1"
    assert by_name["weight-tune"]["state"] == "enabled"  # WEIGHT_TUNE is registered
    assert {schedule["timezone"] for schedule in schedules} == {"Europe/Berlin"}


def test_an_enabled_schedule_shows_its_next_fire(cli: Cli) -> None:
    schedules = cli.ok("schedules", "list", "--json", env=DIAG).json()
    diag = schedules[-1]
    assert (diag["name"], diag["state"], diag["enabled"]) == ("diag", "enabled", True)
    assert diag["next_fire_at"].endswith("T04:00:00+00:00")


def test_run_enqueues_once_while_the_job_is_pending(cli: Cli, store: SqlJobStore) -> None:
    first = cli.ok("schedules", "run", "diag", "--json", env=DIAG).json()
    assert first["created"] is True
    assert first["type"] == "diag.noop"
    assert first["dedupe_key"] == "schedule:diag:manual"
    again = cli.ok("schedules", "run", "diag", env=DIAG)
    assert f"job {first['id']} is already pending" in again.stdout
    assert len(store.list_jobs()) == 1
    listed = cli.ok("schedules", "list", "--json", env=DIAG).json()[-1]
    assert (listed["last_job_id"], listed["last_job_status"]) == (first["id"], "pending")


def test_enable_and_disable_are_stored(cli: Cli, store: SqlJobStore) -> None:
    assert "schedule diag disabled" in cli.ok("schedules", "disable", "diag", env=DIAG).stdout
    rows = ScheduleStore(store.engine).rows()
    assert rows["diag"].enabled is False and rows["diag"].next_fire_at is None
    listed = cli.ok("schedules", "list", "--json", env=DIAG).json()[-1]
    assert (listed["state"], listed["enabled"], listed["next_fire_at"]) == ("disabled", False, None)
    enabled = cli.ok("schedules", "enable", "diag", env=DIAG).stdout
    assert "schedule diag enabled; next fire at" in enabled
    assert ScheduleStore(store.engine).rows()["diag"].enabled is True
    # A default schedule is switched the same way (every default job type is registered now;
    # the scheduler loop's contract tests cover inactive schedules).
    assert "disabled" in cli.ok("schedules", "disable", "watchlist-poll").stdout
    assert ScheduleStore(store.engine).rows()["watchlist-poll"].enabled is False


@pytest.mark.parametrize("command", ["run", "enable", "disable"])
def test_an_unknown_schedule_exits_2(cli: Cli, command: str) -> None:
    assert_bad_input(cli.run("schedules", command, "nightly"), "no schedule named 'nightly'")


def test_schedules_that_cannot_enqueue_exit_2(cli: Cli, store: SqlJobStore) -> None:
    assert_bad_input(
        cli.run("schedules", "run", "weight-tune"), "weight-tune is off", "AUTO_TUNE_ENABLED=false"
    )
    assert_bad_input(
        cli.run("schedules", "enable", "prune", env={"SCHEDULER_PRUNE_CRON": "off"}),
        "SCHEDULER_PRUNE_CRON=off",
    )
    assert store.list_jobs() == []


@pytest.mark.parametrize(
    ("variable", "value", "fragments"),
    [
        ("SCHEDULER_BACKUP_CRON", "61 * * * *", ["schedule backup", "out of range"]),
        ("SCHEDULER_PRUNE_CRON", "every sunday", ["schedule prune", "has 2 fields"]),
        ("SCHEDULER_WATCHLIST_CRON", "0 0 31 2 *", ["watchlist-poll", "never fires"]),
        ("SCHEDULER_RENEWAL_CHECK_CRON", "", ["renewal-check", "empty"]),
        ("AUTO_TUNE_CRON", "@reboot", ["weight-tune", "unknown cron alias"]),
        ("SCHEDULER_DIAG_CRON", "H * * * *", ["schedule diag", "hashed"]),
        ("SCHEDULER_TIMEZONE", "Mars/Olympus", ["unknown time zone"]),
        ("SCHEDULER_CATCHUP_WINDOW", "1h", ["ISO 8601 duration"]),
        ("SCHEDULER_CATCHUP_WINDOW", "P40D", ["P31D"]),
    ],
)
def test_invalid_scheduler_settings_exit_2_naming_the_variable(
    cli: Cli, variable: str, value: str, fragments: list[str]
) -> None:
    assert_bad_input(cli.run("scheduler", env={variable: value}), f"{variable}=", *fragments)


def test_every_command_checks_the_scheduler_settings(cli: Cli) -> None:
    cli.env = cli.env | {"SCHEDULER_BACKUP_CRON": "0 4 * *"}
    commands = [("schedules", "list"), ("jobs", "list"), ("worker", "--burst"), ("serve",)]
    for result in cli.run_many(*commands):
        assert_bad_input(result, "SCHEDULER_BACKUP_CRON='0 4 * *'", "has 4 fields")


def test_a_worker_says_at_start_when_no_scheduler_runs(cli: Cli, store: SqlJobStore) -> None:
    alone = cli.ok("worker", "--burst", env=DIAG | DEFAULTS_OFF)
    assert "no scheduler has ticked within the last two minutes (none has ever run)" in alone.stderr
    assert "1 schedule(s) are enabled (diag)" in alone.stderr
    # Every default schedule with a handler is enabled by default.
    default = cli.ok("worker", "--burst").stderr
    expected = (
        "5 schedule(s) are enabled "
        "(backup, prune, watchlist-poll, renewal-check, portfolio-rescore)"
    )
    assert expected in default
    # Nothing enabled (those off, the others inactive in this version): nothing to say.
    assert "no scheduler has ticked" not in cli.ok("worker", "--burst", env=DEFAULTS_OFF).stderr
    now = utc_now()
    ScheduleStore(store.engine).register_scheduler(SchedulerInfo("live", "host", 1, now, now))
    assert "no scheduler has ticked" not in cli.ok("worker", "--burst", env=DIAG).stderr
