"""The watchlist's rows: add, remove, list, the entries due for a poll, a poll's findings and
the compare-and-sets that let exactly one poller notify an availability or a change of drop
phase. Every read also says whether the name is an active entry of the portfolio."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Engine, Select, delete, exists, or_, select, update

from dominus.db.dialects import dialect_insert
from dominus.db.errors import database_errors
from dominus.schema.tables import portfolio_entries, watchlist_entries
from dominus.watchlist.drops import DropPhase, DropRecord
from dominus.watchlist.model import (
    MAX_NOTES_LENGTH,
    InvalidWatchlistInputError,
    WatchEntry,
    WatchlistEntryExistsError,
    WatchlistEntryNotFoundError,
    WatchStatus,
)


def checked_notes(notes: str | None) -> str | None:
    """Notes as stored: at most MAX_NOTES_LENGTH characters of text a database can hold."""
    if notes is None:
        return None
    if len(notes) > MAX_NOTES_LENGTH:
        raise InvalidWatchlistInputError(f"notes longer than {MAX_NOTES_LENGTH} characters")
    if "\x00" in notes or not _encodable(notes):
        raise InvalidWatchlistInputError("notes hold a NUL character or invalid Unicode")
    return notes or None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# Held: the watched name is an active entry of the portfolio (sold or dropped ones are not).
HELD = (
    exists()
    .where(
        portfolio_entries.c.domain == watchlist_entries.c.domain,
        portfolio_entries.c.status == "active",
    )
    .label("in_portfolio")
)

# What a conclusive "available" clears: the name has no registry record any more.
NO_DROP_FACTS: dict[str, Any] = {
    "rdap_statuses": None,
    "rdap_expires_on": None,
    "rdap_last_changed_on": None,
    "drop_phase": None,
    "drop_phase_since": None,
    "expected_drop_on": None,
    "drop_estimate": None,
    "drop_notified_phase": None,
}


def entry_of(row: Any) -> WatchEntry:
    values = {column.name: row._mapping[column.name] for column in watchlist_entries.c}
    return WatchEntry(**values, in_portfolio=bool(row._mapping["in_portfolio"]))


def _entries() -> Select[Any]:
    return select(watchlist_entries, HELD)


def drop_values(entry: WatchEntry, drop: DropRecord) -> dict[str, Any]:
    """The columns one RDAP answer's drop facts set. A first answer with no drop status is
    recorded as already notified: it is where names start, not news."""
    values: dict[str, Any] = {
        "rdap_statuses": ", ".join(drop.statuses) or None,
        "rdap_expires_on": drop.expires_on,
        "rdap_last_changed_on": drop.last_changed_on,
        "drop_phase": drop.phase.value,
        "drop_phase_since": drop.phase_since,
        "expected_drop_on": drop.estimate.drops_on,
        "drop_estimate": drop.estimate.basis,
    }
    if entry.drop_notified_phase is None and drop.phase is DropPhase.NONE:
        values["drop_notified_phase"] = DropPhase.NONE.value
    return values


class WatchlistStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def add(self, domain: str, notes: str | None, now: datetime) -> WatchEntry:
        """WatchlistEntryExistsError if the domain is already watched (nothing is changed)."""
        with database_errors(), self.engine.begin() as connection:
            statement = (
                dialect_insert(connection, watchlist_entries)
                .values(domain=domain, notes=notes, notified=False, created_at=now)
                .on_conflict_do_nothing(index_elements=["domain"])
                .returning(watchlist_entries.c.id)
            )
            if connection.execute(statement).first() is None:
                raise WatchlistEntryExistsError(f"{domain} is already on the watchlist")
            entry = _read(connection, domain)
        assert entry is not None
        return entry

    def remove(self, domain: str) -> None:
        with database_errors(), self.engine.begin() as connection:
            deleted = connection.execute(
                delete(watchlist_entries).where(watchlist_entries.c.domain == domain)
            ).rowcount
        if deleted != 1:
            raise WatchlistEntryNotFoundError(f"{domain} is not on the watchlist")

    def get(self, domain: str) -> WatchEntry:
        with database_errors(), self.engine.connect() as connection:
            entry = _read(connection, domain)
        if entry is None:
            raise WatchlistEntryNotFoundError(f"{domain} is not on the watchlist")
        return entry

    def entries(self) -> list[WatchEntry]:
        with database_errors(), self.engine.connect() as connection:
            rows = connection.execute(_entries().order_by(watchlist_entries.c.domain))
            return [entry_of(row) for row in rows]

    def due(self, now: datetime, interval: timedelta) -> list[WatchEntry]:
        """Entries never checked, or checked at least `interval` before `now`: never-checked
        first, then the oldest check first."""
        checked = watchlist_entries.c.last_checked_at
        query = (
            _entries()
            .where(or_(checked.is_(None), checked <= now - interval))
            .order_by(checked.is_not(None), checked, watchlist_entries.c.id)
        )
        with database_errors(), self.engine.connect() as connection:
            return [entry_of(row) for row in connection.execute(query)]

    def record_check(
        self,
        entry: WatchEntry,
        status: WatchStatus,
        detail: str,
        now: datetime,
        drop: DropRecord | None = None,
    ) -> None:
        """A poll's finding. A conclusive status replaces the last one (stamping the change
        when it differs); "registered" re-arms the notification, "available" clears the drop
        facts. "unknown" (the lookup failed) changes only the check time and detail: the last
        known status stands. Drop facts (`drop`, from an RDAP answer with statuses) replace
        the last ones; a registered finding without them leaves them as they were."""
        values: dict[str, Any] = {"last_checked_at": now, "last_detail": detail}
        if status == "available":
            values.update(NO_DROP_FACTS)
        elif status == "registered" and drop is not None:
            values.update(drop_values(entry, drop))
        if status != "unknown":
            values["last_status"] = status
            if status != entry.last_status:
                values["last_status_change_at"] = now
        elif entry.last_status is None:
            values["last_status"] = "unknown"
            values["last_status_change_at"] = now
        if status == "registered":
            values["notified"] = False
        with database_errors(), self.engine.begin() as connection:
            connection.execute(
                update(watchlist_entries).where(watchlist_entries.c.id == entry.id).values(**values)
            )

    def claim_notification(self, entry_id: int, now: datetime) -> bool:
        """Mark an available entry notified; True only for the caller that flipped the flag,
        so two polls racing on one entry notify once between them."""
        with database_errors(), self.engine.begin() as connection:
            flipped = connection.execute(
                update(watchlist_entries)
                .where(
                    watchlist_entries.c.id == entry_id,
                    watchlist_entries.c.last_status == "available",
                    watchlist_entries.c.notified.is_(False),
                )
                .values(notified=True, notified_at=now)
            ).rowcount
        return bool(flipped == 1)

    def claim_drop_notice(self, entry_id: int, phase: DropPhase, now: datetime) -> bool:
        """Mark the entry's present drop phase notified; True only for the caller that moved
        the mark, so each change of phase is notified once however many polls race."""
        notified = watchlist_entries.c.drop_notified_phase
        with database_errors(), self.engine.begin() as connection:
            moved = connection.execute(
                update(watchlist_entries)
                .where(
                    watchlist_entries.c.id == entry_id,
                    watchlist_entries.c.drop_phase == phase.value,
                    or_(notified.is_(None), notified != phase.value),
                )
                .values(drop_notified_phase=phase.value, drop_notified_at=now)
            ).rowcount
        return bool(moved == 1)


def _read(connection: Connection, domain: str) -> WatchEntry | None:
    row = connection.execute(_entries().where(watchlist_entries.c.domain == domain)).first()
    return None if row is None else entry_of(row)
