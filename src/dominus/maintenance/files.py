"""Backup files in BACKUP_DIR: their names, the listing, the retention's choice, owner-only
creation, and the confinement of a path to the directory.

A backup is `dominus-<UTC timestamp>.db` (SQLite), `.db.gz` (SQLite, gzip'd) or `.dump`
(PostgreSQL custom format), with `-N` after the timestamp when two backups share a second.
The timestamp in the name, not the file's mtime (which a copy changes), dates a backup. Files
with other names are never listed, deleted or restored. A backup is written under a hidden
`.partial` name and renamed only once verified, so the listing never shows a half-made one.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import BinaryIO, Literal

from dominus.errors import MaintenanceError

BackupKind = Literal["sqlite", "postgresql"]
SUFFIXES: dict[str, BackupKind] = {".db": "sqlite", ".db.gz": "sqlite", ".dump": "postgresql"}
TIMESTAMP_FORMAT = "%Y%m%dT%H%M%SZ"
_NAME = re.compile(
    r"dominus-(?P<stamp>\d{8}T\d{6}Z)(?:-(?P<n>\d+))?(?P<suffix>\.db|\.db\.gz|\.dump)"
)
PARTIAL_SUFFIX = ".partial"
FILE_MODE = 0o600
DIRECTORY_MODE = 0o700
# A `.partial` file this old is what a killed backup left behind; younger ones may be in use.
STALE_PARTIAL_AFTER = timedelta(days=1)


@dataclass(frozen=True)
class BackupFile:
    path: Path
    created_at: datetime  # from the name (UTC)
    size: int
    kind: BackupKind
    compressed: bool

    @property
    def name(self) -> str:
        return self.path.name

    def document(self) -> dict[str, object]:
        return {
            "name": self.name,
            "path": str(self.path),
            "created_at": self.created_at.isoformat(),
            "size_bytes": self.size,
            "backend": self.kind,
            "compressed": self.compressed,
        }


def parse_backup_name(name: str) -> tuple[datetime, BackupKind, bool] | None:
    """(time, backend, gzip'd) of a backup's file name; None for any other name."""
    match = _NAME.fullmatch(name)
    if match is None:
        return None
    try:
        created = datetime.strptime(match["stamp"], TIMESTAMP_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        return None
    return created, SUFFIXES[match["suffix"]], match["suffix"] == ".db.gz"


def backup_name(now: datetime, suffix: str, sequence: int = 0) -> str:
    stamp = now.astimezone(UTC).strftime(TIMESTAMP_FORMAT)
    return f"dominus-{stamp}{f'-{sequence}' if sequence else ''}{suffix}"


def prepare_directory(directory: Path) -> Path:
    """The backup directory, created owner-only (0700) if missing. MaintenanceError when it is
    a file, cannot be created, or is not writable."""
    if directory.exists() and not directory.is_dir():
        raise MaintenanceError(f"BACKUP_DIR={directory} is a file, not a directory")
    if not directory.exists():
        try:
            directory.mkdir(mode=DIRECTORY_MODE, parents=True, exist_ok=True)
        except OSError as error:
            raise MaintenanceError(
                f"BACKUP_DIR={directory}: cannot create the directory ({error.strerror})"
            ) from None
    if not os.access(directory, os.W_OK | os.X_OK):
        raise MaintenanceError(f"BACKUP_DIR={directory} is not writable by this user")
    return directory


def list_backups(directory: Path) -> list[BackupFile]:
    """The backups in `directory`, oldest first; none when it does not exist."""
    if not directory.is_dir():
        return []
    found = []
    for entry in directory.iterdir():
        parsed = parse_backup_name(entry.name)
        if parsed is None or not entry.is_file() or entry.is_symlink():
            continue
        created, kind, compressed = parsed
        found.append(BackupFile(entry, created, entry.stat().st_size, kind, compressed))
    return sorted(found, key=lambda backup: (backup.created_at, backup.name))


def expired_backups(
    backups: list[BackupFile], now: datetime, retention_days: int, keep_last: int | None
) -> list[BackupFile]:
    """The backups the retention deletes: older than `retention_days`, except the newest
    `keep_last`. A retention of 0 keeps everything."""
    if retention_days == 0:
        return []
    newest_first = sorted(backups, key=lambda backup: (backup.created_at, backup.name))[::-1]
    cutoff = now - timedelta(days=retention_days)
    return [backup for backup in newest_first[keep_last or 0 :] if backup.created_at < cutoff]


def stale_partials(directory: Path, now: datetime) -> list[Path]:
    """`.partial` files a killed backup left behind (older than STALE_PARTIAL_AFTER)."""
    if not directory.is_dir():
        return []
    stale = []
    for entry in directory.iterdir():
        if not (entry.name.startswith(".dominus-") and entry.name.endswith(PARTIAL_SUFFIX)):
            continue
        modified = datetime.fromtimestamp(entry.stat().st_mtime, UTC)
        if entry.is_file() and now - modified > STALE_PARTIAL_AFTER:
            stale.append(entry)
    return stale


def reserve_backup_path(directory: Path, now: datetime, suffix: str) -> Path:
    """A backup name no file in `directory` has (with or without gzip), for `now`."""
    taken = {entry.name for entry in directory.iterdir()}
    sequence = 0
    while True:
        name = backup_name(now, suffix, sequence)
        variants = {name, name + ".gz", name.removesuffix(".gz")}
        partials = {f".{variant}{PARTIAL_SUFFIX}" for variant in variants}
        if not (variants | partials) & taken:
            return directory / name
        sequence += 1


def partial_path(final: Path) -> Path:
    return final.with_name(f".{final.name}{PARTIAL_SUFFIX}")


def create_private_file(path: Path) -> BinaryIO:
    """`path` created new (never replacing a file) and open for writing, owner-only (0600)
    whatever the umask."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    os.fchmod(descriptor, FILE_MODE)
    return os.fdopen(descriptor, "wb")


def remove_quietly(path: Path) -> None:
    path.unlink(missing_ok=True)


def confined_backup(directory: Path, file: str) -> Path:
    """The backup `file` names, which must lie inside `directory` once symlinks are resolved.
    A bare file name is looked up in the directory; any other path is taken as given.
    MaintenanceError otherwise, or when it is not a backup's name or not a file."""
    given = Path(file).expanduser()
    candidate = directory / given if given.parent == Path(".") else given
    root = directory.resolve()
    resolved = candidate.resolve()
    if not resolved.is_relative_to(root):
        raise MaintenanceError(
            f"{file} is not inside BACKUP_DIR ({root}); only backups there can be restored"
        )
    if parse_backup_name(resolved.name) is None:
        raise MaintenanceError(
            f"{file} is not a DOMINUS backup (dominus-<timestamp>.db, .db.gz or .dump)"
        )
    if not resolved.is_file():
        raise MaintenanceError(f"no backup file {resolved}")
    return resolved
