"""`dominus maintenance ...` as real subprocesses: backup, --list, restore (round trip, refused
outside BACKUP_DIR or while a worker is alive, refused for a damaged backup, a database that is
not DOMINUS's, or a newer DOMINUS's), vacuum, prune --dry-run; bad input is one line and exit 2
with nothing written; BACKUP and PRUNE payloads are validated at enqueue."""

from __future__ import annotations

import hashlib
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from dominus.jobs import SqlJobStore, WorkerInfo
from dominus.jobs.abort import AbortSignal
from dominus.jobs.clock import utc_now
from dominus.maintenance.backup import BackupOptions, make_backup
from tests.support.cli import Cli, assert_bad_input
from tests.support.seeding import EXPECTED_COUNTS, seed, seed_run_and_schedule, table_counts


@pytest.fixture
def cli(tmp_path: Path, database_url: str, backup_dir: Path) -> Iterator[Cli]:
    runner = Cli(tmp_path, database_url)
    runner.env = runner.env | {"BACKUP_DIR": str(backup_dir), "DOMINUS_DIAGNOSTIC_JOBS": "1"}
    yield runner
    runner.kill_leftovers()


def job_count(store: SqlJobStore) -> int:
    return len(store.list_jobs(limit=1000))


@pytest.mark.backends("sqlite", "postgresql")
def test_backup_list_and_restore_round_trip(cli: Cli, store: SqlJobStore, backup_dir: Path) -> None:
    cli.ok("enqueue", "diag.noop")
    made = cli.ok("maintenance", "backup", "--json").json()
    assert made["verified"] is True and Path(made["path"]).parent == backup_dir
    listed = cli.ok("maintenance", "backup", "--list", "--json").json()
    assert [backup["name"] for backup in listed] == [made["name"]]
    assert "dominus-" in cli.ok("maintenance", "backup", "--list").stdout
    cli.ok("enqueue", "diag.noop")
    assert job_count(store) == 2

    restored = cli.ok("maintenance", "restore", made["name"])
    assert f"restored {made['name']}" in restored.stdout
    assert "the database as it was:" in restored.stdout
    assert job_count(SqlJobStore(store.engine)) == 1


def test_restore_refuses_bad_input_and_live_workers(
    cli: Cli, store: SqlJobStore, backup_dir: Path, tmp_path: Path, database_path: Path
) -> None:
    made = cli.ok("maintenance", "backup", "--json").json()
    outside = tmp_path / "dominus-20300101T000000Z.db"
    outside.write_bytes(Path(made["path"]).read_bytes())
    now = utc_now()
    store.register_worker(WorkerInfo("host:7:alive", "host", 7, 1, ["diag.noop"], now, now))
    outside_run, unknown_run, live_run = cli.run_many(
        ("maintenance", "restore", str(outside)),
        ("maintenance", "restore", "dominus-20300101T000000Z.db"),
        ("maintenance", "restore", made["name"]),
    )
    assert_bad_input(outside_run, "is not inside BACKUP_DIR")
    assert_bad_input(unknown_run, "no backup file")
    assert_bad_input(live_run, "1 worker(s) alive (host:7:alive)", "--force")
    assert not database_path.with_name("dominus.db.pre-restore").exists()
    forced = cli.ok("maintenance", "restore", made["name"], "--force", "--json").json()
    assert forced["pre_restore"] == str(database_path.with_name("dominus.db.pre-restore"))


def test_restore_refuses_a_damaged_or_foreign_backup_in_one_line(
    cli: Cli, store: SqlJobStore, backup_dir: Path, database_path: Path
) -> None:
    engine = store.engine
    cli.ok("enqueue", "diag.noop")
    set_revision = text("UPDATE alembic_version SET version_num = :revision")
    with engine.begin() as connection:  # a backup taken by a newer DOMINUS
        [current] = connection.execute(text("SELECT version_num FROM alembic_version")).scalars()
        connection.execute(set_revision, {"revision": "ffff_newer"})
    newer = make_backup(engine, BackupOptions(backup_dir, 0), utc_now(), AbortSignal()).path
    with engine.begin() as connection:
        connection.execute(set_revision, {"revision": current})
    packed = make_backup(
        engine, BackupOptions(backup_dir, 0, compress="gzip"), utc_now(), AbortSignal()
    ).path
    truncated = backup_dir / "dominus-20990101T000000Z.db.gz"
    truncated.write_bytes(packed.read_bytes()[:-100])
    not_gzip = backup_dir / "dominus-20990101T000001Z.db.gz"
    not_gzip.write_bytes(b"garbage " * 1000)
    not_sqlite = backup_dir / "dominus-20990101T000002Z.db"
    not_sqlite.write_bytes(b"garbage " * 1000)
    stranger = backup_dir / "dominus-20990101T000003Z.db"
    foreign = sqlite3.connect(stranger, isolation_level=None)
    foreign.execute("CREATE TABLE job_queue (id INTEGER PRIMARY KEY, payload TEXT)")
    foreign.close()
    engine.dispose()
    live = hashlib.sha256(database_path.read_bytes()).hexdigest()

    results = cli.run_many(
        *(("maintenance", "restore", path.name) for path in (truncated, not_gzip, not_sqlite)),
        ("maintenance", "restore", stranger.name),
        ("maintenance", "restore", newer.name),
    )
    not_verified = "does not verify: "
    assert_bad_input(results[0], truncated.name, not_verified, "nothing was restored")
    assert_bad_input(results[1], not_gzip.name, not_verified, "Not a gzipped file")
    assert_bad_input(results[2], not_sqlite.name, not_verified, "file is not a database")
    assert_bad_input(results[3], stranger.name, "is not a DOMINUS database (no alembic_version")
    assert_bad_input(results[4], newer.name, "is from a newer DOMINUS (revision ffff_newer unknown")
    assert hashlib.sha256(database_path.read_bytes()).hexdigest() == live
    assert not database_path.with_name("dominus.db.pre-restore").exists()
    assert sorted(path.name for path in backup_dir.iterdir() if ".partial" in path.name) == []


def test_backup_dir_that_is_a_file_and_negative_settings_exit_2(
    cli: Cli, backup_dir: Path, tmp_path: Path
) -> None:
    backup_dir.write_text("a file")
    results = cli.run_many(
        ("maintenance", "backup"),
        ("maintenance", "prune", "--dry-run"),
    )
    assert_bad_input(results[0], f"BACKUP_DIR={backup_dir} is a file")
    cli.env = cli.env | {"JOB_RETENTION_DAYS": "-1"}
    assert_bad_input(
        cli.run("maintenance", "prune"), "JOB_RETENTION_DAYS='-1'", "greater than or equal to 0"
    )
    cli.env = cli.env | {"JOB_RETENTION_DAYS": "7", "BACKUP_KEEP_LAST": "-3"}
    assert_bad_input(cli.run("maintenance", "backup", "--list"), "BACKUP_KEEP_LAST='-3'")
    assert results[1].code == 0, results[1]


def test_prune_dry_run_counts_and_prune_deletes(cli: Cli, store: SqlJobStore) -> None:
    seed(store.engine, utc_now())
    before = table_counts(store.engine)
    dry = cli.ok("maintenance", "prune", "--dry-run", "--json").json()
    assert dry["dry_run"] is True and dry["counts"] == EXPECTED_COUNTS
    assert table_counts(store.engine) == before
    table = cli.ok("maintenance", "prune").stdout
    assert "job_queue" in table and f"deleted {sum(EXPECTED_COUNTS.values())} rows" in table
    assert table_counts(store.engine)["job_queue"] == before["job_queue"] - 4


def test_vacuum_and_payload_validation(cli: Cli, backup_dir: Path) -> None:
    vacuumed, bad_backup, bad_prune, good = cli.run_many(
        ("maintenance", "vacuum"),
        ("enqueue", "BACKUP", "--payload", '{"retention_days": -1}'),
        ("enqueue", "PRUNE", "--payload", '{"batch_size": 0, "dry_run": true}'),
        ("enqueue", "BACKUP", "--payload", '{"keep_last": 3}', "--json"),
    )
    assert vacuumed.code == 0, vacuumed
    assert "integrity ok, VACUUM done" in vacuumed.stdout
    assert_bad_input(bad_backup, "BACKUP", "retention_days")
    assert_bad_input(bad_prune, "PRUNE", "batch_size")
    assert good.code == 0, good
    assert good.json()["payload"]["keep_last"] == 3


def test_backup_files_are_owner_only(cli: Cli, backup_dir: Path) -> None:
    made = cli.ok("maintenance", "backup", "--json").json()
    assert stat.S_IMODE(Path(made["path"]).stat().st_mode) == 0o600
    assert stat.S_IMODE(backup_dir.stat().st_mode) == 0o700


def test_runs_and_schedules_say_when_their_job_was_pruned(cli: Cli, store: SqlJobStore) -> None:
    run_id, job_id = seed_run_and_schedule(store.engine)
    cli.ok("maintenance", "prune")
    shown, listed, schedules = cli.run_many(
        ("runs", "show", str(run_id)),
        ("runs", "list"),
        ("schedules", "list", "--json"),
    )
    assert shown.code == listed.code == schedules.code == 0, (shown, listed, schedules)
    assert f"job {job_id}: pruned" in shown.stdout
    assert f"{job_id} (pruned)" in listed.stdout
    [backup] = [schedule for schedule in schedules.json() if schedule["name"] == "backup"]
    assert (backup["last_job_id"], backup["last_job_status"]) == (job_id, "pruned")
