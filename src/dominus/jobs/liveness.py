"""Knowing at once that a worker died: each worker holds a lock that its death releases.

A silent heartbeat is slow evidence: a live worker may be stalled, so a job is reclaimed from a
silent one only after the max running age (5 minutes by default). A dead process is known sooner
by what the operating system or the server undoes when it dies:

- PostgreSQL: a session advisory lock, held on a connection of the worker's own. The server
  releases it when that connection ends, and a SIGKILLed process's connections end at once (its
  sockets are closed by the kernel). Any process can see which advisory locks are held
  (`pg_locks`), on any host.
- SQLite: an `flock` on a file per worker in a directory beside the database file (SQLite
  workers share one host, since SQLite cannot be shared over a network). The kernel releases it
  when the process dies, however it dies.

A worker's row says which lock it took (`workers.liveness_lock`); a worker that took none (an
older version, a lock it could not take) is judged by its heartbeat alone. What a reaper does
with a free lock, and how it keeps a live worker whose lock connection was cut from being taken
for dead, is `rescue.py`'s.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import re
import threading
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

log = logging.getLogger("dominus.worker")

ADVISORY = "advisory"
FLOCK = "flock"

# The first key of every liveness advisory lock (the two-key form: this namespace and a key per
# worker), so that they never meet the single-key locks DOMINUS takes for housekeeping.
ADVISORY_NAMESPACE = 0x444D4C56  # "DMLV"
# A lock file older than this whose lock is free belongs to a worker that died; removed at the
# next worker start (younger ones may belong to a worker between creating and locking it).
STALE_LOCK_FILE_SECONDS = 60.0


class LivenessLock(Protocol):
    """The lock a worker holds while it lives, taken before it registers and released after it
    marked itself stopped (both from the worker's loop thread)."""

    @property
    def kind(self) -> str:
        """What the worker's row records: ADVISORY or FLOCK."""
        ...

    @property
    def held(self) -> bool: ...

    def acquire(self) -> bool:
        """Take the lock (idempotent); False if it could not be taken. A lock that can be lost
        while its process lives keeps itself: it takes itself again."""
        ...

    def release(self) -> None: ...


@dataclass(frozen=True)
class LockOwner:
    """A worker that holds running jobs and took a liveness lock, as its row says."""

    worker_id: str
    kind: str
    hostname: str


# --- PostgreSQL ----------------------------------------------------------------------------
def advisory_key(worker_id: str) -> int:
    """The second key of a worker's advisory lock: 31 bits of a hash of its id. Two workers
    sharing a key is harmless for the rescue: a dead worker whose key a live one holds looks
    alive, and is judged by its heartbeat instead."""
    digest = hashlib.blake2b(worker_id.encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") & 0x7FFFFFFF


# The second keys of the liveness locks held in this database (two-key advisory locks show in
# pg_locks as classid, objid and objsubid 2).
HELD_ADVISORY_KEYS_SQL = (
    "SELECT objid::bigint FROM pg_locks WHERE locktype = 'advisory' AND granted "
    "AND objsubid = 2 AND classid::bigint = :namespace "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)


def free_advisory_owners(owners: Collection[LockOwner], held_keys: set[int]) -> set[str]:
    return {
        owner.worker_id
        for owner in owners
        if owner.kind == ADVISORY and advisory_key(owner.worker_id) not in held_keys
    }


# --- SQLite --------------------------------------------------------------------------------
def lock_directory(database: Path) -> Path:
    """Where the lock files of a SQLite database's workers live: beside it, named like SQLite's
    own companions (`dominus.db-wal`, `dominus.db-shm`)."""
    return database.parent / f"{database.name}-workers"


def lock_file(directory: Path, worker_id: str) -> Path:
    return directory / (re.sub(r"[^A-Za-z0-9._-]", "_", worker_id) + ".lock")


class FileLivenessLock:
    """An exclusive `flock` on the worker's own file, held by an open descriptor."""

    kind = FLOCK

    def __init__(self, directory: Path, worker_id: str) -> None:
        self._directory = directory
        self._path = lock_file(directory, worker_id)
        self._fd: int | None = None
        self._lock = threading.Lock()

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> bool:
        with self._lock:
            if self._fd is not None:
                return True
            try:
                self._directory.mkdir(mode=0o700, exist_ok=True)
                remove_stale_lock_files(self._directory)
                fd = os.open(self._path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError as error:
                log.warning("cannot hold a liveness lock file in %s (%s)", self._directory, error)
                return False
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as error:
                os.close(fd)
                log.warning("cannot lock %s (%s)", self._path, error)
                return False
            self._fd = fd
            return True

    def release(self) -> None:
        with self._lock:
            fd, self._fd = self._fd, None
            if fd is None:
                return
            with contextlib.suppress(OSError):
                self._path.unlink()
            os.close(fd)


def flock_is_free(path: Path) -> bool | None:
    """True when nobody holds `path`'s lock, False when someone does, None when there is no
    such file (so nothing can be told from it)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # closing releases the lock if this call took it
    return True


def free_flock_owners(owners: Collection[LockOwner], directory: Path, hostname: str) -> set[str]:
    """The owners whose lock file on this host exists and is not locked. A worker on another
    host (a database file on a network share) cannot be judged from here."""
    return {
        owner.worker_id
        for owner in owners
        if owner.kind == FLOCK
        and owner.hostname == hostname
        and flock_is_free(lock_file(directory, owner.worker_id)) is True
    }


def remove_lock_files(directory: Path, worker_ids: Iterable[str]) -> None:
    """Remove the files of workers found dead (still unlocked: a lock taken meanwhile stays)."""
    for worker_id in worker_ids:
        _remove_if_free(lock_file(directory, worker_id))


def remove_stale_lock_files(directory: Path) -> None:
    """Remove the unlocked files of workers that died long enough ago."""
    cutoff = time.time() - STALE_LOCK_FILE_SECONDS
    for path in directory.glob("*.lock"):
        with contextlib.suppress(OSError):
            if path.stat().st_mtime < cutoff:
                _remove_if_free(path)


def _remove_if_free(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        path.unlink(missing_ok=True)  # while holding it: nobody can be judging it locked
    except OSError:
        pass
    finally:
        os.close(fd)
