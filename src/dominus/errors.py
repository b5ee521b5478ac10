"""The exception tree. Every error DOMINUS raises on purpose derives from `DominusError`, and
every error of a feature from one of three kinds: `NotFoundError` (what was asked for does not
exist), `ConflictError` (valid, but the state of what it names does not allow it) or
`InvalidInputError` (the input is wrong; nothing was changed). The API answers each kind with
its status (404, 409, 422; a database in trouble 503, a full queue 429) and the error's own
`code`; the CLI exits 2 for all but a database failure (1) and a full queue (75). Each class's
docstring says what it means, and is its default message. Classes defined elsewhere name their
module; "(+Kind)" names the second base.

    DominusError
    ├── ConfigurationError
    │   └── InvalidScheduleError
    ├── ConflictError
    │   ├── CopyRefusedError
    │   ├── CalibrationError                                dominus.backtest.model
    │   └── WatchlistEntryExistsError                       dominus.watchlist.model
    ├── DatabaseError
    │   ├── DatabaseBusyError
    │   ├── DatabaseGoneError
    │   └── SchemaNotMigratedError
    ├── InvalidInputError
    │   ├── OutcomeInputError                               dominus.backtest.model
    │   ├── ExportPathError                                 dominus.cli.csv_file
    │   ├── MarksInputError                                 dominus.cli.marks
    │   ├── OptionError                                     dominus.cli.pipeline_output
    │   ├── RunInputError                                   dominus.cli.run
    │   ├── ValuationInputError                             dominus.cli.valuation
    │   ├── AppraisalInputError                             dominus.pipeline.appraisal
    │   ├── ProviderError                                   dominus.providers.errors
    │   │   ├── BootstrapError                              dominus.providers.errors
    │   │   ├── ProviderChoiceError                         dominus.providers.setup
    │   │   └── ProviderDataError                           dominus.providers.errors
    │   ├── ModelFileError                                  dominus.valuation.model
    │   ├── SalesFileError                                  dominus.valuation.sales
    │   └── InvalidWatchlistInputError                      dominus.watchlist.model
    │       └── InvalidWatchDomainError                     dominus.watchlist.model
    ├── JobError
    │   ├── ClaimLostError
    │   ├── DuplicateJobTypeError
    │   ├── InvalidJobOptionError (+InvalidInputError)
    │   │   └── InvalidConcurrencyLimitError                dominus.jobs.concurrency
    │   ├── InvalidPayloadError (+InvalidInputError)
    │   ├── InvalidRateLimitError (+InvalidInputError)
    │   ├── InvalidTransitionError (+ConflictError)
    │   │   └── ScheduleInactiveError
    │   ├── JobAbortedError
    │   ├── JobNotFoundError (+NotFoundError)
    │   ├── NotEnqueueableError (+InvalidInputError)
    │   ├── PermanentJobError
    │   ├── QueueFullError
    │   ├── RateLimitKeyNotFoundError (+NotFoundError)
    │   ├── ScheduleNotFoundError (+NotFoundError)
    │   └── UnknownJobTypeError (+InvalidInputError)
    ├── MaintenanceError
    │   └── BackupFailedError
    ├── NotFoundError
    │   ├── VersionNotFoundError                            dominus.pipeline.scoring_sets
    │   ├── RunNotFoundError                                dominus.pipeline.store
    │   ├── AlertNotFoundError                              dominus.renewals.model
    │   └── WatchlistEntryNotFoundError                     dominus.watchlist.model
    └── PortfolioError                                      dominus.portfolio.model
        ├── EntryExistsError (+ConflictError)               dominus.portfolio.model
        ├── EntryNotFoundError (+NotFoundError)             dominus.portfolio.model
        └── PortfolioInputError (+InvalidInputError)        dominus.portfolio.model
            ├── ImportRefusedError                          dominus.portfolio.csv_import
            └── EntryStatusError (+ConflictError)           dominus.portfolio.model

This tree is checked against the classes themselves by `tests/unit/test_errors.py`.
"""

from __future__ import annotations


class DominusError(Exception):
    """DOMINUS failed."""

    # The API's error code for it (`{"error": {"code": ...}}`); subclasses narrow it.
    code = "bad_request"

    def __init__(self, message: str | None = None, *, code: str | None = None) -> None:
        super().__init__(message or (self.__doc__ or "").strip())
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class NotFoundError(DominusError):
    """What was asked for does not exist."""

    code = "not_found"


class ConflictError(DominusError):
    """The request is valid, but the state of what it names does not allow it."""

    code = "conflict"


class InvalidInputError(DominusError):
    """The input is invalid (the message says which value and why); nothing was changed."""

    code = "invalid_request"


class ConfigurationError(DominusError):
    """A setting is missing or out of its allowed range."""


class InvalidScheduleError(ConfigurationError):
    """A cron expression or time zone that cannot be used."""


class CopyRefusedError(ConflictError):
    """The copy was refused (same database, or a target that is not empty); nothing was written."""


class MaintenanceError(DominusError):
    """The maintenance operation cannot be done as asked; nothing was changed."""


class BackupFailedError(MaintenanceError):
    """The backup or restore failed; no partial file was kept."""


class DatabaseError(DominusError):
    """The database could not be reached or used."""

    code = "database_unavailable"

    def __init__(self, message: str | None = None, *, detail: str | None = None) -> None:
        super().__init__(message)
        # The driver's own words: for logs only, since they can name hosts, users and paths.
        self.detail = detail

    def __str__(self) -> str:
        return f"{self.message}: {self.detail}" if self.detail else self.message


class DatabaseBusyError(DatabaseError):
    """The database stayed locked by another writer for longer than the busy timeout."""

    code = "database_busy"


class DatabaseGoneError(DatabaseError):
    """The database file this process opened was deleted or replaced; it must stop."""


class SchemaNotMigratedError(DatabaseError):
    """The database schema is not up to date; run `dominus db upgrade`."""

    code = "not_migrated"


class JobError(DominusError):
    """A job operation failed."""


class UnknownJobTypeError(JobError, InvalidInputError):
    """No handler is registered for that job type."""

    code = "unknown_job_type"


class NotEnqueueableError(JobError, InvalidInputError):
    """That job type belongs to a resource and is enqueued only by the resource's own
    endpoint or command, not by the generic enqueue."""

    code = "not_enqueueable"


class InvalidPayloadError(JobError, InvalidInputError):
    """The payload does not match the job type's payload model."""

    code = "invalid_payload"


class InvalidJobOptionError(JobError, InvalidInputError):
    """An enqueue option is out of its allowed range."""

    code = "invalid_option"


class InvalidRateLimitError(JobError, InvalidInputError):
    """A rate limit or a rate-limit key is not valid (ADR 0053)."""

    code = "invalid_rate_limit"


class RateLimitKeyNotFoundError(JobError, NotFoundError):
    """No rate-limit key by that name: it was never configured nor paused."""


class QueueFullError(JobError):
    """The job queue is full (JOB_QUEUE_MAX_DEPTH pending and running jobs); try again later."""

    code = "queue_full"


class JobNotFoundError(JobError, NotFoundError):
    """No job with that id."""


class InvalidTransitionError(JobError, ConflictError):
    """The job's current state does not allow that operation."""


class DuplicateJobTypeError(JobError):
    """That job type is already registered."""


class ScheduleNotFoundError(JobError, NotFoundError):
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
