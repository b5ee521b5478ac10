"""The facts providers hand to the pipeline and the scoring engine (plain, immutable values)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from typing import Protocol


class Availability(StrEnum):
    AVAILABLE = "available"
    REGISTERED = "registered"
    UNKNOWN = "unknown"  # could not be verified (timeouts, errors, disagreeing answers)


@dataclass(frozen=True)
class DnsVerdict:
    domain: str
    availability: Availability
    detail: str = ""  # e.g. "NS present at 127.0.0.1", "NXDOMAIN", "timeout"
    # No resolver could be believed about the name's TLD (it did not find names that surely
    # exist): the network, not the name, is in question.
    canary_failed: bool = False


@dataclass(frozen=True)
class RdapRecord:
    domain: str
    availability: Availability
    registered_at: date | None = None
    expires_at: date | None = None
    detail: str = ""  # e.g. "HTTP 404", "HTTP 503 after 3 attempts", "no RDAP server for .zz"
    # Who answered: "rdap", "whois" (no RDAP service for the TLD), or for offline providers
    # "sample" (the bundled sample data) or "file" (a records file).
    source: str = "rdap"
    # The registry's status values in RFC 9083's spelling ("pending delete", "redemption
    # period"); None when the answer carried no status list (WHOIS, files, a terse server).
    statuses: tuple[str, ...] | None = None
    last_changed_at: date | None = None  # the "last changed" event


@dataclass(frozen=True)
class Mark:
    """A registered trademark, as listed in a marks file (CSV `mark,owner,registry,classes`,
    and `number`: the registry's application or serial number, which `dominus marks import`
    writes so a later import replaces or removes the same mark)."""

    mark: str
    owner: str = ""
    registry: str = ""
    classes: tuple[str, ...] = ()
    number: str = ""


@dataclass(frozen=True)
class KeywordStats:
    keyword: str
    monthly_volume: int
    cpc: float


@dataclass(frozen=True)
class ComparableSale:
    domain: str
    price: float
    currency: str
    sale_date: date
    venue: str = ""


@dataclass(frozen=True)
class ExpiryFacts:
    """What a closeout list says about an expiring domain (any of them may be unknown)."""

    age_years: float | None = None
    backlinks: int | None = None
    wayback_snapshots: int | None = None


class StopSignal(Protocol):
    """What long provider work watches to stop early (a job's AbortSignal, a threading.Event)."""

    def is_set(self) -> bool: ...

    def wait(self, timeout: float | None = None) -> bool: ...
