"""Backup file names, the retention's choice, owner-only files and the confinement of a restore
path to BACKUP_DIR."""

from __future__ import annotations

import os
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dominus.errors import MaintenanceError
from dominus.maintenance.files import (
    BackupFile,
    backup_name,
    confined_backup,
    create_private_file,
    expired_backups,
    list_backups,
    parse_backup_name,
    prepare_directory,
    reserve_backup_path,
)

NOW = datetime(2030, 6, 1, 4, 0, 0, tzinfo=UTC)


def backups_aged(*days: float) -> list[BackupFile]:
    made = [NOW - timedelta(days=age) for age in days]
    return [BackupFile(Path(backup_name(when, ".db")), when, 1, "sqlite", False) for when in made]


def test_names_carry_the_utc_time_and_the_backend() -> None:
    name = backup_name(datetime(2030, 6, 1, 6, 30, 5, tzinfo=UTC), ".db")
    assert name == "dominus-20300601T063005Z.db"
    assert parse_backup_name(name) == (datetime(2030, 6, 1, 6, 30, 5, tzinfo=UTC), "sqlite", False)
    assert parse_backup_name("dominus-20300601T063005Z-2.db.gz")[1:] == ("sqlite", True)  # type: ignore[index]
    assert parse_backup_name("dominus-20300601T063005Z.dump")[1] == "postgresql"  # type: ignore[index]
    for other in ("dominus.db", "dominus-20301301T000000Z.db", "x-20300601T063005Z.db", "notes"):
        assert parse_backup_name(other) is None


def test_a_retention_of_zero_keeps_everything() -> None:
    assert expired_backups(backups_aged(0, 40, 400, 4000), NOW, 0, None) == []


def test_the_retention_deletes_what_is_older_than_its_days() -> None:
    backups = backups_aged(1, 29, 31, 400)
    expired = expired_backups(backups, NOW, 30, None)
    assert [backup.created_at for backup in expired] == [
        NOW - timedelta(days=31),
        NOW - timedelta(days=400),
    ]


def test_keep_last_protects_the_newest_however_old() -> None:
    backups = backups_aged(100, 200, 300, 400)
    expired = expired_backups(backups, NOW, 30, 2)
    assert [backup.created_at for backup in expired] == [
        NOW - timedelta(days=300),
        NOW - timedelta(days=400),
    ]
    assert expired_backups(backups, NOW, 30, 10) == []
    assert expired_backups(backups, NOW, 30, 0) == expired_backups(backups, NOW, 30, None)


def test_a_second_backup_in_the_same_second_gets_its_own_name(tmp_path: Path) -> None:
    first = reserve_backup_path(tmp_path, NOW, ".db")
    first.write_bytes(b"")
    second = reserve_backup_path(tmp_path, NOW, ".db.gz")  # same stamp, other suffix: taken too
    assert second.name == "dominus-20300601T040000Z-1.db.gz"
    assert [backup.name for backup in list_backups(tmp_path)] == [first.name]


def test_files_are_owner_only_whatever_the_umask(tmp_path: Path) -> None:
    previous = os.umask(0)
    try:
        directory = prepare_directory(tmp_path / "new" / "backups")
        with create_private_file(directory / "file") as handle:
            handle.write(b"x")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE((directory / "file").stat().st_mode) == 0o600
    with pytest.raises(FileExistsError):
        create_private_file(directory / "file")


def test_a_backup_dir_that_is_a_file_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "backups"
    file.write_text("not a directory")
    with pytest.raises(MaintenanceError, match="is a file, not a directory"):
        prepare_directory(file)


class TestConfinement:
    @pytest.fixture
    def directory(self, tmp_path: Path) -> Path:
        directory = tmp_path / "backups"
        directory.mkdir()
        (directory / "dominus-20300601T040000Z.db").write_bytes(b"")
        return directory

    def test_a_bare_name_is_looked_up_in_the_directory(self, directory: Path) -> None:
        found = confined_backup(directory, "dominus-20300601T040000Z.db")
        assert found == (directory / "dominus-20300601T040000Z.db").resolve()
        assert confined_backup(directory, str(found)) == found

    def test_a_path_outside_is_refused(self, directory: Path, tmp_path: Path) -> None:
        outside = tmp_path / "dominus-20300601T050000Z.db"
        outside.write_bytes(b"")
        with pytest.raises(MaintenanceError, match="not inside BACKUP_DIR"):
            confined_backup(directory, str(outside))
        with pytest.raises(MaintenanceError, match="not inside BACKUP_DIR"):
            confined_backup(directory, str(directory / ".." / outside.name))

    def test_a_symlink_leading_outside_is_refused(self, directory: Path, tmp_path: Path) -> None:
        outside = tmp_path / "dominus-20300601T050000Z.db"
        outside.write_bytes(b"")
        (directory / "dominus-20300601T060000Z.db").symlink_to(outside)
        with pytest.raises(MaintenanceError, match="not inside BACKUP_DIR"):
            confined_backup(directory, "dominus-20300601T060000Z.db")

    def test_other_files_are_refused(self, directory: Path) -> None:
        (directory / "notes.db").write_bytes(b"")
        with pytest.raises(MaintenanceError, match="not a DOMINUS backup"):
            confined_backup(directory, "notes.db")
        with pytest.raises(MaintenanceError, match="no backup file"):
            confined_backup(directory, "dominus-20300601T070000Z.db")
