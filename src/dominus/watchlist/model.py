"""A watched domain, as read from its row."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal

from dominus.domain_names import normalise_domain
from dominus.errors import ConflictError, InvalidInputError, NotFoundError

WatchStatus = Literal["available", "registered", "unknown"]


@dataclass(frozen=True)
class WatchEntry:
    id: int
    domain: str
    notes: str | None
    last_checked_at: datetime | None
    last_status: WatchStatus | None
    last_detail: str | None
    last_status_change_at: datetime | None
    notified: bool
    notified_at: datetime | None
    created_at: datetime
    rdap_statuses: str | None = None
    rdap_expires_on: date | None = None
    rdap_last_changed_on: date | None = None
    drop_phase: str | None = None  # a DropPhase value; None until an RDAP answer had statuses
    drop_phase_since: datetime | None = None
    expected_drop_on: date | None = None
    drop_estimate: str | None = None
    drop_notified_phase: str | None = None
    drop_notified_at: datetime | None = None
    # Not a column: the name is an active entry of the portfolio (read with the row).
    in_portfolio: bool = False

    @property
    def statuses(self) -> tuple[str, ...]:
        return tuple(self.rdap_statuses.split(", ")) if self.rdap_statuses else ()


MAX_NOTES_LENGTH = 2000


class WatchlistEntryExistsError(ConflictError):
    """That domain is already on the watchlist."""


class WatchlistEntryNotFoundError(NotFoundError):
    """That domain is not on the watchlist."""


class InvalidWatchlistInputError(InvalidInputError):
    """Notes too long or not text (the message says why)."""


class InvalidWatchDomainError(InvalidWatchlistInputError):
    """Not a registrable domain name (the message says why)."""

    code = "invalid_domain"


def watched_domain(raw: str) -> str:
    """The name as it is stored and looked up (lower-case ASCII, IDNA): stage 1's rules."""
    try:
        return normalise_domain(raw).ascii
    except ValueError as error:  # InvalidNameError, or text no codec takes (a lone surrogate)
        raise InvalidWatchDomainError(f"invalid domain {raw!r}: {error}") from None
