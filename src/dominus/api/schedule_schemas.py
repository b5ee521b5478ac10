"""Bodies of /api/v1/schedules: the same documents `dominus schedules list --json` prints
(`dominus.jobs.scheduling.documents`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class ScheduleOut(BaseModel):
    name: str
    job_type: str
    cron: str | None = Field(description="The cron expression; null when the schedule is off.")
    timezone: str
    payload: dict[str, Any]
    state: Literal["enabled", "disabled", "inactive", "off"] = Field(
        description="enabled: fires; disabled: switched off by a user; inactive: its job type "
        "is not registered in this version; off: its cron setting is `off`."
    )
    enabled: bool = Field(
        description="The flag `enable`/`disable` set (stored, kept across restarts)."
    )
    inactive_reason: str | None = None
    next_fire_at: str | None = None
    last_fire_at: str | None = None
    last_job_id: int | None = None
    last_job_status: str | None = Field(
        default=None,
        description="The last job's status (its outcome once it has ended); `pruned` once the "
        "finished job was deleted by PRUNE.",
    )
    skipped_count: int = Field(description="Missed fires that were not enqueued.")
    last_skipped_at: str | None = None
    updated_at: str | None = None
