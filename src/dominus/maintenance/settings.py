"""The maintenance settings: where backups go and how long they and the database's history are
kept. `MaintenanceSettings` is a base class of `dominus.config.Settings`, so a negative value is
refused at start-up with the variable's name (exit 2), like every other setting.

A retention of 0 days keeps everything (ADR 0020): 0 never means "delete at once".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from dominus.settings_slice import SettingsSlice

MAX_RETENTION_DAYS = 36_500
# Ids of one step are bound as parameters: both backends cap a statement's parameters.
MAX_PRUNE_BATCH_SIZE = 10_000
Compression = Literal["off", "gzip"]


class MaintenanceSettings(SettingsSlice):
    # Relative paths are read from the working directory, as the default database path is.
    BACKUP_DIR: str = Field(default="./data/backup", min_length=1)
    BACKUP_RETENTION_DAYS: int = Field(default=30, ge=0, le=MAX_RETENTION_DAYS)
    # The newest N backups are never deleted by the retention, however old. Unset: no such floor.
    BACKUP_KEEP_LAST: int | None = Field(default=None, ge=0, le=1_000_000)
    BACKUP_COMPRESS: Compression = "off"
    JOB_RETENTION_DAYS: int = Field(default=7, ge=0, le=MAX_RETENTION_DAYS)
    DLQ_RETENTION_DAYS: int = Field(default=30, ge=0, le=MAX_RETENTION_DAYS)
    PIPELINE_RUN_RETENTION_DAYS: int = Field(default=180, ge=0, le=MAX_RETENTION_DAYS)
    # Rows one prune transaction deletes at most (per table).
    PRUNE_BATCH_SIZE: int = Field(default=1000, ge=1, le=MAX_PRUNE_BATCH_SIZE)


def backup_directory(settings: MaintenanceSettings) -> Path:
    """BACKUP_DIR as an absolute path (not required to exist)."""
    return Path(settings.BACKUP_DIR).expanduser().absolute()


def backup_payload(settings: MaintenanceSettings) -> dict[str, Any]:
    """The scheduled BACKUP job's payload: the retention of these settings."""
    payload: dict[str, Any] = {
        "retention_days": settings.BACKUP_RETENTION_DAYS,
        "compress": settings.BACKUP_COMPRESS,
    }
    if settings.BACKUP_KEEP_LAST is not None:
        payload["keep_last"] = settings.BACKUP_KEEP_LAST
    return payload


def prune_payload(settings: MaintenanceSettings) -> dict[str, Any]:
    """The scheduled PRUNE job's payload: the retentions of these settings."""
    return {
        "job_retention_days": settings.JOB_RETENTION_DAYS,
        "dlq_retention_days": settings.DLQ_RETENTION_DAYS,
        "pipeline_run_retention_days": settings.PIPELINE_RUN_RETENTION_DAYS,
    }
