"""The LISTEN/NOTIFY channel names, shared by the store (which notifies) and the listener, and
the jobs channel's payload: the earliest `run_at` of the jobs a transaction made pending (ADR
0062), or empty when the sender does not say."""

from __future__ import annotations

from datetime import UTC, datetime

JOBS_CHANNEL = "dominus_jobs"
CANCEL_CHANNEL = "dominus_cancel"


def due_payload(due_at: datetime | None) -> str:
    """The jobs channel's payload for jobs that fall due at `due_at` at the earliest."""
    return "" if due_at is None else due_at.astimezone(UTC).isoformat()


def due_from_payload(payload: str) -> datetime | None:
    """When the notified jobs fall due, or None when the payload does not say (an empty one from
    a sender that does not know, or anything unreadable: the worker then claims at once)."""
    try:
        due_at = datetime.fromisoformat(payload)
    except ValueError:
        return None
    return None if due_at.tzinfo is None else due_at
