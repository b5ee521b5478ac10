"""BACKUP: a verified backup of the database into BACKUP_DIR, then the retention (ADR 0020).

The payload may override the settings' retention (`retention_days`, `keep_last`) and
compression; an empty payload uses the settings. A backup that cannot start (BACKUP_DIR is a
file or not writable, pg_dump missing or older than the server) fails at once, without a retry;
one that fails on the way (the copy does not verify) is retried like any failed job."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dominus.errors import BackupFailedError, MaintenanceError, PermanentJobError
from dominus.handlers.dependencies import HandlerDependencies
from dominus.jobs.context import JobContext
from dominus.jobs.queues import MAINTENANCE_QUEUE
from dominus.jobs.registry import HandlerRegistry
from dominus.maintenance.backup import BackupOptions, make_backup
from dominus.maintenance.settings import MAX_RETENTION_DAYS, Compression

BACKUP = "BACKUP"
BACKUP_MAX_ATTEMPTS = 2
BACKUP_CONCURRENCY_KEY = "backup"


class BackupPayload(BaseModel):
    """Overrides of BACKUP_RETENTION_DAYS, BACKUP_KEEP_LAST and BACKUP_COMPRESS."""

    model_config = ConfigDict(extra="forbid")

    retention_days: int | None = Field(
        default=None, ge=0, le=MAX_RETENTION_DAYS, description="0 keeps every backup."
    )
    keep_last: int | None = Field(
        default=None, ge=0, le=1_000_000, description="The newest N backups are never deleted."
    )
    compress: Compression | None = None


def register_backup(registry: HandlerRegistry, dependencies: HandlerDependencies) -> None:
    def handle(payload: BackupPayload, context: JobContext) -> dict[str, Any]:
        options = BackupOptions.from_settings(
            dependencies.settings,
            retention_days=payload.retention_days,
            keep_last=payload.keep_last,
            compress=payload.compress,
        )
        try:
            result = make_backup(
                dependencies.engine,
                options,
                dependencies.clock(),
                context.abort,
                on_step=lambda step: context.progress(step=step),
            )
        except BackupFailedError:
            raise
        except MaintenanceError as error:
            raise PermanentJobError(error.message) from error
        return result.document()

    registry.register(
        BACKUP,
        handle,
        BackupPayload,
        max_attempts=BACKUP_MAX_ATTEMPTS,
        queue=MAINTENANCE_QUEUE,
        # One backup at a time on every host: two would copy the same database into the same
        # directory and apply the same retention (ADR 0052).
        concurrency_key=lambda _payload: BACKUP_CONCURRENCY_KEY,
        concurrency_limit=1,
    )
