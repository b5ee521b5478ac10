"""RDAP: the registry's own answer to "is this domain registered?" (RFC 9082/9083).

404 from the authoritative server means not registered; 200 means registered, with dates from the
`events` list (registration, expiration, last changed) and the `status` values
(`rdap_statuses.py`: RFC 9083's "pending delete" and EPP's "pendingDelete" alike). Everything
else (timeouts, rate limits, server errors after retries, odd statuses, bodies that are not
RDAP JSON) is UNKNOWN: a per-domain failure must never stop a whole run, and a
domain we could not verify must never be reported as available.

What counts, exactly:

- A 200 is REGISTERED only when its body is an RDAP domain object: a JSON object whose
  `objectClassName` is "domain" (RFC 9083 has every object carry it), or, from a server that
  leaves the member out, one with an `ldhName`. `{}`, a list, an error object, an HTML page or
  JSON nested too deep to parse is UNKNOWN. A garbled or out-of-range event date is no date.
- A 404 is AVAILABLE only from the registry's own origin (the bootstrap URL's scheme, host and
  port). After a redirect elsewhere it is UNKNOWN: whoever answered is not the registry.
- Each attempt is one exchange bounded as a whole (`dominus.bounded_http`): RDAP_TIMEOUT_MS
  covers connect, headers, body and redirects together, the answer is capped at
  MAX_ANSWER_BYTES, and the lookup's stop signal ends it within a fraction of a second.
  Redirects are followed on the registry's origin, or to another host whose addresses are all
  public, in the same scheme; any other redirect is refused (UNKNOWN), its target not asked.

Every attempt waits its turn at the rate gate of the registry's server (`rate_gate.py`, key
`rdap:<host of the base URL>`). A 429, or a 503 with Retry-After, pauses that key for every
lookup (Retry-After as given, up to MAX_PAUSE_SECONDS; a 429 without one for the backoff), and
the next attempt waits out the pause at the gate.

A TLD with no RDAP service in the bootstrap is asked over WHOIS instead, when the client has a
WhoisClient that knows the TLD's server (`whois.py`); the record's `source` says which answered.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx

from dominus.bounded_http import (
    Answer,
    AnswerTooLargeError,
    ExchangeStoppedError,
    ExchangeTimeoutError,
    RedirectRefusedError,
    fetch,
    same_origin,
)
from dominus.providers.csvfiles import parse_date, read_rows
from dominus.providers.errors import ProviderDataError
from dominus.providers.models import Availability, RdapRecord, StopSignal
from dominus.providers.names import listed_domain, name_to_look_up
from dominus.providers.rate_gate import MAX_PAUSE_SECONDS, RateGate, pauses_only, rdap_key
from dominus.providers.rdap_bootstrap import RdapBootstrap
from dominus.providers.rdap_statuses import statuses_of
from dominus.providers.whois import WhoisClient, lookup_backoff

TRANSIENT_STATUSES = frozenset({429, 500, 502, 503, 504})
# The longest one lookup waits on the Retry-After of an answer that pauses nobody else (a 500,
# 502 or 504 carrying one).
MAX_RETRY_AFTER_SECONDS = 30.0
RDAP_ACCEPT = "application/rdap+json, application/json;q=0.9"
# A domain's RDAP answer is a few KiB (tens with many entities and notices); a body past this
# is no answer to read, and reading it whole is how a hostile server would fill the memory.
MAX_ANSWER_BYTES = 256 * 1024


class RdapClient(Protocol):
    def lookup(self, domain: str, stop: StopSignal | None = None) -> RdapRecord: ...


class HttpRdapClient:
    def __init__(
        self,
        bootstrap: RdapBootstrap,
        client: httpx.Client,
        timeout_seconds: float,
        max_attempts: int = 3,
        backoff_base_seconds: float = 1.0,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        whois: WhoisClient | None = None,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
        gate: RateGate | None = None,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.bootstrap = bootstrap
        self.whois = whois  # asked for TLDs without an RDAP service
        self.client = client
        self.timeout_seconds = timeout_seconds  # for each attempt's whole exchange
        self.max_attempts = max_attempts
        self.backoff_base_seconds = backoff_base_seconds
        self.max_answer_bytes = max_answer_bytes
        self._backoff = lookup_backoff(backoff_base_seconds)
        self._sleep = sleep
        self._rng = rng or random.Random()
        # Without a gate of the process, this client's own: no limits, but pauses honoured.
        self.gate = gate if gate is not None else pauses_only(sleep)

    def lookup(self, domain: str, stop: StopSignal | None = None) -> RdapRecord:
        wanted = name_to_look_up(domain)  # ASCII labels, which is what registries index
        domain = wanted.domain
        if wanted.problem is not None:
            return RdapRecord(domain, Availability.UNKNOWN, detail=wanted.detail)
        bases = self.bootstrap.base_urls(domain)
        if not bases:
            return self._without_rdap(domain, stop)
        url = f"{bases[0].rstrip('/')}/domain/{domain}"
        key = rdap_key(bases[0])
        problem = ""
        for attempt in range(1, self.max_attempts + 1):
            if not self.gate.acquire(key, stop):
                return RdapRecord(domain, Availability.UNKNOWN, detail="stopped")
            try:
                outcome = self._attempt(domain, url, stop)
            finally:
                self.gate.finished(key)
            if isinstance(outcome, RdapRecord):
                return outcome
            problem = outcome.problem
            delay = self._delay_after(outcome, attempt, key, domain)
            if attempt == self.max_attempts:
                break
            if delay <= 0:
                continue
            if stop is not None:
                if stop.wait(delay):
                    return RdapRecord(domain, Availability.UNKNOWN, detail="stopped")
            else:
                self._sleep(delay)
        attempts = "attempt" if self.max_attempts == 1 else "attempts"
        return RdapRecord(
            domain,
            Availability.UNKNOWN,
            detail=f"{problem} after {self.max_attempts} {attempts} at {_host(url)}",
        )

    def _delay_after(self, retry: _Retry, attempt: int, key: str, domain: str) -> float:
        """How long this lookup waits before its next attempt. A server that is busy (a 429, a
        503 with Retry-After) is paused at the gate instead, for every lookup: 0 here."""
        backoff = self._backoff.delay(attempt, self._rng.random)
        if retry.status == 429 or (retry.status == 503 and retry.retry_after is not None):
            pause = backoff if retry.retry_after is None else retry.retry_after
            self.gate.pause(key, pause, f"{retry.problem} for {domain}")
            return 0.0
        if retry.retry_after is not None:
            return min(retry.retry_after, MAX_RETRY_AFTER_SECONDS)
        return backoff

    def _without_rdap(self, domain: str, stop: StopSignal | None) -> RdapRecord:
        """The registry's WHOIS server answers when IANA lists no RDAP service for the TLD."""
        if self.whois is not None and self.whois.server_for(domain) is not None:
            return self.whois.lookup(domain, stop)
        tld = domain.rsplit(".", 1)[-1]
        missing = "RDAP service" if self.whois is None else "RDAP service or WHOIS server"
        return RdapRecord(domain, Availability.UNKNOWN, detail=f"no {missing} for .{tld}")

    def _attempt(self, domain: str, url: str, stop: StopSignal | None) -> RdapRecord | _Retry:
        """A final record, or what went wrong, to retry."""
        try:
            answer = fetch(
                self.client,
                url,
                deadline_seconds=self.timeout_seconds,
                max_bytes=self.max_answer_bytes,
                stop=stop,
                headers={"Accept": RDAP_ACCEPT},
            )
        except ExchangeStoppedError:
            return RdapRecord(domain, Availability.UNKNOWN, detail="stopped")
        except ExchangeTimeoutError as exc:
            return _Retry(str(exc))
        except (AnswerTooLargeError, RedirectRefusedError) as exc:
            # Asking again would bring the same answer.
            return RdapRecord(domain, Availability.UNKNOWN, detail=f"{exc} at {_host(url)}")
        except httpx.TransportError as exc:
            # Connect errors, resets, broken responses: worth another try.
            return _Retry(f"{type(exc).__name__}: {exc}")
        except httpx.HTTPError as exc:
            # Not transient (e.g. an invalid URL): retrying will not help.
            return RdapRecord(domain, Availability.UNKNOWN, detail=f"{type(exc).__name__}: {exc}")
        return _interpret(domain, httpx.URL(url), answer)


@dataclass(frozen=True)
class _Retry:
    problem: str  # what went wrong, for the detail once attempts run out
    status: int | None = None  # the HTTP status, when the server answered
    retry_after: float | None = None  # its Retry-After, in seconds


def _interpret(domain: str, asked: httpx.URL, answer: Answer) -> RdapRecord | _Retry:
    where = _host(str(answer.url))
    status = answer.status
    if status == 404:
        if not same_origin(asked, answer.url):
            return RdapRecord(
                domain,
                Availability.UNKNOWN,
                detail=f"HTTP 404 at {where}, not the registry's {_host(str(asked))}",
            )
        return RdapRecord(domain, Availability.AVAILABLE, detail=f"HTTP 404 at {where}")
    if status == 200:
        return _registered(domain, answer.body, where)
    if status in TRANSIENT_STATUSES:
        return _Retry(f"HTTP {status}", status, _retry_after(answer.headers.get("Retry-After")))
    return RdapRecord(domain, Availability.UNKNOWN, detail=f"HTTP {status} at {where}")


def _registered(domain: str, raw: bytes, where: str) -> RdapRecord:
    body = _domain_object(raw)
    if body is None:
        # A 200 that is not an RDAP domain object is likely a proxy or error page, not the
        # registry speaking.
        return RdapRecord(
            domain, Availability.UNKNOWN, detail=f"HTTP 200 at {where} but not RDAP JSON"
        )
    registered_at = expires_at = last_changed_at = None
    events = body.get("events")
    for event in events if isinstance(events, list) else []:
        if not isinstance(event, dict) or not isinstance(event.get("eventAction"), str):
            continue
        action = event["eventAction"].lower()
        when = _parse_event_date(event.get("eventDate"))
        if action == "registration" and registered_at is None:
            registered_at = when
        elif action == "expiration" and expires_at is None:
            expires_at = when
        elif action == "last changed" and last_changed_at is None:
            last_changed_at = when
    return RdapRecord(
        domain,
        Availability.REGISTERED,
        registered_at=registered_at,
        expires_at=expires_at,
        detail=f"HTTP 200 at {where}",
        statuses=statuses_of(body.get("status")),
        last_changed_at=last_changed_at,
    )


def _domain_object(raw: bytes) -> dict[str, Any] | None:
    """The body as an RDAP domain object (see the module's rules), or None."""
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past the parser
        return None
    if not isinstance(body, dict):
        return None
    object_class = body.get("objectClassName")
    if object_class is None:
        return body if isinstance(body.get("ldhName"), str) else None
    return body if isinstance(object_class, str) and object_class.lower() == "domain" else None


def _parse_event_date(value: Any) -> date | None:
    """The date of an RDAP event, or None; never raises, whatever the server sent."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        moment = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        try:  # some servers send odd offsets or fractions; the date part is what we need
            return date.fromisoformat(text[:10])
        except ValueError:
            return None
    if moment.tzinfo is not None:
        try:
            moment = moment.astimezone(UTC)
        except OverflowError:  # e.g. 9999-12-31T23:59:59-23:59: past the last date we can hold
            return None
    return moment.date()


def _retry_after(value: str | None) -> float | None:
    """Retry-After as seconds (delta-seconds or an HTTP date), at most MAX_PAUSE_SECONDS; None
    if absent or garbled."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        seconds = float(value)
    else:
        try:
            moment = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        seconds = (moment - datetime.now(UTC)).total_seconds()
    return min(max(seconds, 0.0), MAX_PAUSE_SECONDS)


def _host(url: str) -> str:
    return urlsplit(url).netloc or url


class RecordsRdap:
    """Offline stand-in: a CSV of `domain,status,registered_at,expires_at` (status `registered`
    or `available`, dates YYYY-MM-DD or empty). Domains not listed are AVAILABLE. Its records
    say `source` ("sample" for the bundled sample data, else "file")."""

    def __init__(self, path: Path, source: str = "file") -> None:
        self.path = Path(path)
        self.source = source
        self._records: dict[str, RdapRecord] = {}
        for line, row in read_rows(
            self.path, required=("domain", "status"), optional=("registered_at", "expires_at")
        ):
            domain = listed_domain(self.path, line, "domain", row["domain"])
            try:
                status = Availability(row["status"].lower())
            except ValueError:
                status = Availability.UNKNOWN
            if status is Availability.UNKNOWN:
                raise ProviderDataError(
                    self.path, f"status {row['status']!r} is not registered or available", line
                )
            dates = {
                column: parse_date(self.path, line, column, row[column])
                if row.get(column)
                else None
                for column in ("registered_at", "expires_at")
            }
            self._records[domain] = RdapRecord(
                domain,
                status,
                registered_at=dates["registered_at"],
                expires_at=dates["expires_at"],
                detail=f"listed in {self.path.name}",
                source=source,
            )

    def lookup(self, domain: str, stop: StopSignal | None = None) -> RdapRecord:
        wanted = name_to_look_up(domain)
        domain = wanted.domain
        if wanted.problem is not None:
            return RdapRecord(
                domain, Availability.UNKNOWN, detail=wanted.detail, source=self.source
            )
        record = self._records.get(domain)
        if record is not None:
            return record
        return RdapRecord(
            domain,
            Availability.AVAILABLE,
            detail=f"not listed in {self.path.name}",
            source=self.source,
        )
