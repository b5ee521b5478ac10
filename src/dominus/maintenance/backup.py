"""A verified backup of the database into BACKUP_DIR, then the retention.

SQLite: an online copy (`VACUUM INTO`, see `sqlite_copy`), verified, optionally gzip'd. PostgreSQL:
`pg_dump --format=custom`, verified by `pg_restore --list`. Either way the file is written under
a hidden `.partial` name, owner-only, and renamed to `dominus-<UTC timestamp>.<suffix>` only once
verified; a failure removes it. The retention then deletes backups older than its days (never
the newest `keep_last`, never the one just made; 0 days keeps everything).
"""

from __future__ import annotations

import gzip
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from dominus.db.engine import sqlite_path
from dominus.errors import MaintenanceError
from dominus.jobs.abort import AbortSignal
from dominus.maintenance import pg_tools
from dominus.maintenance.files import (
    create_private_file,
    expired_backups,
    list_backups,
    partial_path,
    prepare_directory,
    remove_quietly,
    reserve_backup_path,
    stale_partials,
)
from dominus.maintenance.settings import Compression, MaintenanceSettings, backup_directory
from dominus.maintenance.sqlite_copy import copy_online, verify_copy

log = logging.getLogger("dominus.maintenance")

GZIP_CHUNK_BYTES = 1 << 20

# Told each step as it starts: "copy", "verify", "compress", "retention".
StepReporter = Callable[[str], None]


def _no_report(_step: str) -> None:
    return None


@dataclass(frozen=True)
class BackupOptions:
    directory: Path
    retention_days: int
    keep_last: int | None = None
    compress: Compression = "off"

    @classmethod
    def from_settings(cls, settings: MaintenanceSettings, **overrides: Any) -> BackupOptions:
        values: dict[str, Any] = {
            "directory": backup_directory(settings),
            "retention_days": settings.BACKUP_RETENTION_DAYS,
            "keep_last": settings.BACKUP_KEEP_LAST,
            "compress": settings.BACKUP_COMPRESS,
        }
        values.update({name: value for name, value in overrides.items() if value is not None})
        return cls(**values)


@dataclass(frozen=True)
class BackupResult:
    path: Path
    backend: str
    size_bytes: int
    duration_seconds: float
    verified: bool
    compressed: bool
    job_rows: int | None  # the copy's job count (SQLite); None for a dump
    pruned_files: list[str] = field(default_factory=list)

    def document(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "name": self.path.name,
            "backend": self.backend,
            "size_bytes": self.size_bytes,
            "duration_seconds": round(self.duration_seconds, 3),
            "verified": self.verified,
            "compressed": self.compressed,
            "job_rows": self.job_rows,
            "pruned_files": self.pruned_files,
        }


def make_backup(
    engine: Engine,
    options: BackupOptions,
    now: datetime,
    abort: AbortSignal,
    on_step: StepReporter = _no_report,
) -> BackupResult:
    """Back up the engine's database, verify the copy, apply the retention."""
    started = time.monotonic()
    directory = prepare_directory(options.directory)
    write = _BACKUP_WRITERS.get(engine.dialect.name)
    if write is None:  # pragma: no cover - the engine factory accepts no other backend
        raise _cannot_back_up(engine)
    path, job_rows = write(engine, directory, now, options.compress, abort, on_step)
    log.info("backup written and verified: %s", path)
    on_step("retention")
    pruned = apply_retention(directory, now, options, keep=path)
    return BackupResult(
        path=path,
        backend=engine.dialect.name,
        size_bytes=path.stat().st_size,
        duration_seconds=time.monotonic() - started,
        verified=True,
        compressed=path.name.endswith(".gz"),
        job_rows=job_rows,
        pruned_files=pruned,
    )


def apply_retention(
    directory: Path, now: datetime, options: BackupOptions, *, keep: Path | None = None
) -> list[str]:
    """Delete the backups the retention lets go (and `.partial` files killed backups left);
    the names of the deleted backups."""
    expired = expired_backups(
        list_backups(directory), now, options.retention_days, options.keep_last
    )
    deleted = []
    for backup in expired:
        if keep is not None and backup.path == keep:
            continue
        remove_quietly(backup.path)
        deleted.append(backup.name)
        log.info("backup retention: deleted %s", backup.name)
    for partial in stale_partials(directory, now):
        remove_quietly(partial)
        log.info("deleted %s, left behind by an interrupted backup", partial.name)
    return deleted


def _backup_sqlite(
    engine: Engine,
    directory: Path,
    now: datetime,
    compress: Compression,
    abort: AbortSignal,
    on_step: StepReporter,
) -> tuple[Path, int | None]:
    database = sqlite_path(engine)
    if database is None:  # pragma: no cover - the engine factory refuses in-memory SQLite
        raise _cannot_back_up(engine)
    final, copy = _reserve(directory, now, ".db.gz" if compress == "gzip" else ".db")
    packed = partial_path(final)
    try:
        on_step("copy")
        copy_online(database, copy, abort)
        on_step("verify")
        job_rows = verify_copy(copy, abort)
        if compress == "gzip":
            on_step("compress")
            _gzip(copy, packed, abort)
            remove_quietly(copy)
            os.replace(packed, final)
        else:
            os.replace(copy, final)
    except BaseException:
        remove_quietly(copy)
        remove_quietly(packed)
        raise
    return final, job_rows


def _backup_postgres(
    engine: Engine,
    directory: Path,
    now: datetime,
    _compress: Compression,  # a custom-format dump is compressed already
    abort: AbortSignal,
    on_step: StepReporter,
) -> tuple[Path, int | None]:
    server_major = pg_tools.server_major_version(engine)
    pg_tools.checked_tool(pg_tools.PG_DUMP, server_major)  # before any file is made
    final, partial = _reserve(directory, now, ".dump")
    try:
        on_step("copy")
        pg_tools.dump(engine, partial, abort)
        on_step("verify")
        pg_tools.verify_dump(partial, abort, server_major)
        os.replace(partial, final)
    except BaseException:
        remove_quietly(partial)
        raise
    return final, None


# Each backend's copy of the database into the backup directory: the verified file and the
# copy's job count (None for a dump, which is not opened to count).
BackupWriter = Callable[
    [Engine, Path, datetime, Compression, AbortSignal, StepReporter], tuple[Path, int | None]
]
_BACKUP_WRITERS: dict[str, BackupWriter] = {
    "sqlite": _backup_sqlite,
    "postgresql": _backup_postgres,
}


def _cannot_back_up(engine: Engine) -> MaintenanceError:
    return MaintenanceError(f"cannot back up a {engine.dialect.name} database")


def _reserve(directory: Path, now: datetime, suffix: str) -> tuple[Path, Path]:
    """A free final name and its (uncompressed) `.partial` file, created empty and owner-only.
    The exclusive create settles a race between two backups in the same second."""
    while True:
        final = reserve_backup_path(directory, now, suffix)
        partial = partial_path(final.with_name(final.name.removesuffix(".gz")))
        try:
            create_private_file(partial).close()
        except FileExistsError:
            continue
        return final, partial


def _gzip(source: Path, target: Path, abort: AbortSignal) -> None:
    with (
        source.open("rb") as reader,
        create_private_file(target) as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", filename="", mtime=0) as writer,
    ):
        while chunk := reader.read(GZIP_CHUNK_BYTES):
            abort.raise_if_set()
            writer.write(chunk)


def gunzip(source: Path, target: Path, abort: AbortSignal) -> None:
    """Decompress a `.db.gz` backup into a new owner-only file."""
    with gzip.open(source, "rb") as reader, create_private_file(target) as writer:
        while True:
            abort.raise_if_set()
            chunk = reader.read(GZIP_CHUNK_BYTES)
            if not chunk:
                break
            writer.write(chunk)
