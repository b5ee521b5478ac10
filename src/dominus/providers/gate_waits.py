"""Showing what lookups wait for at the rate gate: a job's progress gains `waiting_for`
(`{"server": "rdap.verisign.com", "until": "2026-12-05T12:03:10+00:00"}`) while one of its
lookups waits, and the CLI and the dashboard say "waiting for rdap.verisign.com until 12:03:10
UTC"."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from dominus.providers.rate_gate import RateGate, server_of, watched

WAITING_FOR = "waiting_for"  # the progress field


def describe_wait(progress: Mapping[str, Any] | None) -> str | None:
    """`waiting for HOST until HH:MM:SS UTC` from a progress document, or None."""
    waiting = (progress or {}).get(WAITING_FOR)
    if not isinstance(waiting, Mapping) or not waiting.get("server"):
        return None
    try:
        until = datetime.fromisoformat(str(waiting.get("until")))
    except ValueError:
        return f"waiting for {waiting['server']}"
    until = until if until.tzinfo else until.replace(tzinfo=UTC)
    return f"waiting for {waiting['server']} until {until.astimezone(UTC):%H:%M:%S} UTC"


class Waits:
    """What a job's lookups wait for now, as its progress shows it: `{"server", "until"}` of
    the wait that ends last, or None. `on_change` hears each change of that."""

    def __init__(self, on_change: Callable[[dict[str, str] | None], None]) -> None:
        self._on_change = on_change
        self._lock = threading.Lock()
        self._waiting: dict[tuple[str, int], datetime] = {}  # (key, thread) → until
        self._shown: dict[str, str] | None = None

    def __call__(self, key: str, until: datetime | None) -> None:
        waiter = (key, threading.get_ident())
        with self._lock:
            if until is None:
                self._waiting.pop(waiter, None)
            else:
                self._waiting[waiter] = until
            current = self._document()
            if current == self._shown:
                return
            self._shown = current
        self._on_change(current)

    def current(self) -> dict[str, str] | None:
        with self._lock:
            return self._shown

    def _document(self) -> dict[str, str] | None:
        if not self._waiting:
            return None
        (key, _), until = max(self._waiting.items(), key=lambda item: item[1])
        return {"server": server_of(key), "until": until.isoformat(timespec="seconds")}


class ProgressWithWaits:
    """A job's progress (`report`, e.g. JobContext.progress) with `waiting_for` added while a
    lookup through `gate(...)` waits, and dropped when none does."""

    def __init__(self, report: Callable[..., None]) -> None:
        self._report = report
        self._lock = threading.Lock()
        self._fields: dict[str, Any] = {}
        self.waits = Waits(lambda _document: self._send())

    def __call__(self, **fields: Any) -> None:
        with self._lock:
            self._fields = dict(fields)
        self._send()

    def gate(self, gate: RateGate) -> RateGate:
        """`gate`, its waits shown in this progress."""
        return watched(gate, self.waits)

    def _send(self) -> None:
        with self._lock:
            fields = dict(self._fields)
        waiting = self.waits.current()
        if waiting is not None:
            fields[WAITING_FOR] = waiting
        self._report(**fields)
