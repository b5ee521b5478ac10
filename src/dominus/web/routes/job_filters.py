"""The Jobs page's filter, read from its query string (a filtered list is a link) or from a
bulk form's fields (the same names): the state (a status, or a pending job's reason to wait),
the type, how recent, and a search in payloads and errors (ADR 0054)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

from starlette.exceptions import HTTPException

from dominus.jobs.model import JobStatus
from dominus.jobs.selection import SEARCH_MAX_LENGTH, JobSelection, Waiting

# The `since` filter's choices: label and hours.
SINCE_CHOICES = {"1h": 1, "24h": 24, "7d": 24 * 7, "30d": 24 * 30}
# The state filter: a status, or a pending job's reason to wait (after "pending").
STATE_CHOICES: tuple[tuple[str, str], ...] = (
    ("pending", "pending (all)"),
    ("due", "pending: due"),
    ("scheduled", "pending: scheduled"),
    ("retrying", "pending: retrying"),
    ("running", "running"),
    ("completed", "completed"),
    ("failed", "failed"),
    ("cancelled", "cancelled"),
)
_STATES = {value for value, _label in STATE_CHOICES}
_WAITING = {waiting.value for waiting in Waiting}
_STATUSES = {status.value for status in JobStatus}
MAX_TYPE_LENGTH = 200


@dataclass(frozen=True)
class JobListFilter:
    status: str = ""  # a STATE_CHOICES value, or "" for any
    type: str = ""
    since: str = ""  # a SINCE_CHOICES key, or ""
    q: str = ""  # the search

    @classmethod
    def read(cls, values: Mapping[str, str]) -> JobListFilter:
        """From the query or a form; a value outside the choices is a 422 page."""
        status = values.get("status", "").strip()
        job_type = values.get("type", "").strip()
        since = values.get("since", "").strip()
        search = values.get("q", "").strip()
        if status and status not in _STATES:
            raise HTTPException(422, f"status: one of {', '.join(sorted(_STATES))}")
        if since and since not in SINCE_CHOICES:
            raise HTTPException(422, f"since: one of {', '.join(SINCE_CHOICES)}")
        if len(job_type) > MAX_TYPE_LENGTH:
            raise HTTPException(422, f"type: at most {MAX_TYPE_LENGTH} characters")
        if len(search) > SEARCH_MAX_LENGTH:
            raise HTTPException(422, f"search: at most {SEARCH_MAX_LENGTH} characters")
        return cls(status, job_type, since, search)

    def selection(self, now: datetime) -> JobSelection:
        waiting = Waiting(self.status) if self.status in _WAITING else None
        status = JobStatus(self.status) if self.status in _STATUSES else None
        hours = SINCE_CHOICES.get(self.since)
        created_after = None if hours is None else now.astimezone(UTC) - timedelta(hours=hours)
        return JobSelection(
            status=status,
            job_type=self.type or None,
            waiting=waiting,
            search=self.q or None,
            created_after=created_after,
        )

    def fields(self) -> dict[str, str]:
        """The filter's non-empty values, by their query names."""
        values = {"status": self.status, "type": self.type, "since": self.since, "q": self.q}
        return {name: value for name, value in values.items() if value}

    def query(self, before: int | None = None) -> str:
        values = self.fields()
        if before is not None:
            values["before"] = str(before)
        return urlencode(values)

    @property
    def narrowed(self) -> bool:
        return bool(self.fields())
