"""The exception tree. Every error DOMINUS raises on purpose derives from `DominusError`.

    DominusError
    ├── ConfigurationError          a setting is missing or out of range
    │   └── InvalidScheduleError    a cron expression or time zone that cannot be used
    ├── CopyRefusedError            `db copy` refused (same database, non-empty target)
    ├── MaintenanceError            a backup, restore or vacuum cannot start (BACKUP_DIR unusable,
    │   │                           a file outside it, pg_dump missing or too old, live workers,
    │   │                           a backup to restore that is damaged or not DOMINUS's)
    │   └── BackupFailedError       a backup or restore started and failed (verification, tool)
    ├── DatabaseError               the database could not be reached or used (driver error kept
    │   │                           as __cause__)
    │   ├── DatabaseBusyError       the database stayed locked (SQLITE_BUSY) or a lock timed out
    │   ├── DatabaseGoneError       the SQLite file this process opened was deleted or replaced
    │   └── SchemaNotMigratedError  the database is behind the code's migrations
    └── JobError                    something about a job or its queue
        ├── UnknownJobTypeError     no handler is registered for that job type
        ├── NotEnqueueableError     that job type is enqueued only by its own endpoint/command
        ├── InvalidPayloadError     the payload does not match the job type's payload model
        ├── InvalidJobOptionError   an enqueue option is out of range (priority, attempts, ...)
        ├── QueueFullError          JOB_QUEUE_MAX_DEPTH pending+running jobs already exist
        ├── JobNotFoundError        no job (or dead-letter entry) with that id
        ├── InvalidTransitionError  the job's state does not allow that operation
        │   └── ScheduleInactiveError  the schedule cannot enqueue (cron off, type not registered)
        ├── DuplicateJobTypeError   a job type was registered twice
        ├── ScheduleNotFoundError   no schedule with that name
        ├── JobAbortedError         raised inside a handler when its abort signal is set
        └── PermanentJobError       raised by a handler: retrying cannot help, fail the job now

The class docstring is the default message, so `raise QueueFullError()` still says something useful.
"""

from __future__ import annotations


class DominusError(Exception):
    """DOMINUS failed."""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or (self.__doc__ or "").strip())

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class ConfigurationError(DominusError):
    """A setting is missing or out of its allowed range."""


class InvalidScheduleError(ConfigurationError):
    """A cron expression or time zone that cannot be used."""


class CopyRefusedError(DominusError):
    """The copy was refused (same database, or a target that is not empty); nothing was written."""


class MaintenanceError(DominusError):
    """The maintenance operation cannot be done as asked; nothing was changed."""


class BackupFailedError(MaintenanceError):
    """The backup or restore failed; no partial file was kept."""


class DatabaseError(DominusError):
    """The database could not be reached or used."""

    def __init__(self, message: str | None = None, *, detail: str | None = None) -> None:
        super().__init__(message)
        # The driver's own words: for logs only, since they can name hosts, users and paths.
        self.detail = detail

    def __str__(self) -> str:
        return f"{self.message}: {self.detail}" if self.detail else self.message


class DatabaseBusyError(DatabaseError):
    """The database stayed locked by another writer for longer than the busy timeout."""


class DatabaseGoneError(DatabaseError):
    """The database file this process opened was deleted or replaced; it must stop."""


class SchemaNotMigratedError(DatabaseError):
    """The database schema is not up to date; run `dominus db upgrade`."""


class JobError(DominusError):
    """A job operation failed."""


class UnknownJobTypeError(JobError):
    """No handler is registered for that job type."""


class NotEnqueueableError(JobError):
    """That job type belongs to a resource and is enqueued only by the resource's own
    endpoint or command, not by the generic enqueue."""


class InvalidPayloadError(JobError):
    """The payload does not match the job type's payload model."""


class InvalidJobOptionError(JobError):
    """An enqueue option is out of its allowed range."""


class QueueFullError(JobError):
    """The job queue is full (JOB_QUEUE_MAX_DEPTH pending and running jobs); try again later."""


class JobNotFoundError(JobError):
    """No job with that id."""


class InvalidTransitionError(JobError):
    """The job's current state does not allow that operation."""


class DuplicateJobTypeError(JobError):
    """That job type is already registered."""


class ScheduleNotFoundError(JobError):
    """No schedule with that name."""


class ScheduleInactiveError(InvalidTransitionError):
    """The schedule cannot enqueue: its cron is off or its job type is not registered."""


class JobAbortedError(JobError):
    """The job was asked to stop (cancelled, timed out, or the worker is shutting down)."""


class PermanentJobError(JobError):
    """The job cannot succeed however often it is tried (e.g. what it refers to is gone).

    Raised by a handler, it fails the attempt without a retry, whatever attempts remain: the job
    ends failed with a dead-letter entry carrying the message, as after its last attempt."""


class ClaimLostError(JobError):
    """This attempt no longer owns its job (it was reclaimed from a silent worker, and another
    attempt may be running it now): the handler's transaction was rolled back, nothing it wrote
    was kept."""
