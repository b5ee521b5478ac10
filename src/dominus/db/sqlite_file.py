"""Noticing that a SQLite database file was deleted or replaced under a running process.

An open SQLite connection keeps working on a file that was unlinked (or renamed away and
replaced by another file at the same path): every write "succeeds" into a file nobody will ever
open again. The path's identity (device and inode) is compared with the one recorded when the
process opened the database; a stat costs microseconds, so a worker checks every second or so,
off its loop (`dominus.jobs.maintenance`)."""

from __future__ import annotations

import os
from pathlib import Path

from dominus.errors import DatabaseGoneError


class SqliteFileWatch:
    def __init__(self, path: Path) -> None:
        self._path = path
        self._identity = _identity(path)

    @property
    def path(self) -> Path:
        return self._path

    def check(self) -> None:
        """Raise DatabaseGoneError when the path no longer leads to the file opened."""
        identity = _identity(self._path)
        if self._identity is None:  # not there yet when the store was built (`db upgrade`)
            self._identity = identity
            return
        if identity is None:
            raise DatabaseGoneError(
                f"the database file {self._path.absolute()} was deleted while this process had "
                "it open; stopping (nothing written since then can be kept)"
            )
        if identity != self._identity:
            raise DatabaseGoneError(
                f"the database file {self._path.absolute()} was replaced by another file while "
                "this process had it open; stopping"
            )


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    return status.st_dev, status.st_ino
