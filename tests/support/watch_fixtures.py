"""Shared pieces of the watchlist and renewal tests: a recording notifier, loopback DNS and RDAP
servers with real clients pointed at them."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from dominus.notify import Notification
from dominus.providers.dns import ResolverDnsChecker
from dominus.providers.rdap import HttpRdapClient
from dominus.providers.rdap_bootstrap import RdapBootstrap
from tests.support.fakes.dns_server import FakeDnsServer
from tests.support.fakes.rdap_server import FakeRdap, bootstrap_doc

REGISTERED_RDAP: tuple[int, dict[str, str], bytes, float] = (
    200,
    {},
    b'{"objectClassName": "domain", "events": []}',
    0.0,
)
NOT_FOUND_RDAP: tuple[int, dict[str, str], bytes, float] = (404, {}, b"{}", 0.0)
BROKEN_RDAP: tuple[int, dict[str, str], bytes, float] = (503, {}, b"", 0.0)


@dataclass
class RecordingNotifier:
    sent: list[Notification] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def send(self, notification: Notification) -> bool:
        with self.lock:
            self.sent.append(notification)
        return True

    def items(self) -> list[Notification]:
        """Every notification sent, in order, a digest's items in its place."""
        with self.lock:
            return [item for sent in self.sent for item in (sent.items or (sent,))]

    def events(self) -> list[str]:
        return [notification.event for notification in self.items()]


class Registry:
    """One loopback DNS server and one loopback RDAP server for the `tlds` (`.test` unless
    told), and the real clients DOMINUS uses, pointed at them. `registered(name)` /
    `available(name)` / `broken(name)` / `in_status(name, ...)` say what both answer for a
    name from now on."""

    def __init__(self, tlds: Sequence[str] = ("test",)) -> None:
        self.tlds = tuple(tlds)
        self.dns_server = FakeDnsServer({}, default="nxdomain")
        self.rdap_server = FakeRdap()
        self.http = httpx.Client()
        self.dns = ResolverDnsChecker([self.dns_server.address], timeout_seconds=0.5)
        bootstrap = RdapBootstrap.parse(bootstrap_doc(self.rdap_server.base.rstrip("/"), tlds))
        self.rdap = HttpRdapClient(
            bootstrap, self.http, timeout_seconds=0.5, max_attempts=1, backoff_base_seconds=0.01
        )

    def registered(self, domain: str) -> None:
        self.dns_server.zones[domain] = "ns"
        self.rdap_server.routes[f"/rdap/domain/{domain}"] = [REGISTERED_RDAP]

    def available(self, domain: str) -> None:
        self.dns_server.zones[domain] = "nxdomain"
        self.rdap_server.routes[f"/rdap/domain/{domain}"] = [NOT_FOUND_RDAP]

    def registered_in_rdap_only(self, domain: str) -> None:
        """No delegation (a name on hold): DNS says NXDOMAIN, the registry knows it."""
        self.dns_server.zones[domain] = "nxdomain"
        self.rdap_server.routes[f"/rdap/domain/{domain}"] = [REGISTERED_RDAP]

    def in_status(
        self,
        domain: str,
        statuses: Sequence[str],
        *,
        last_changed: str | None = None,
        expires: str | None = None,
        delegated: bool = False,
    ) -> None:
        """Registered, with these RDAP `status` values and events (dates YYYY-MM-DD); a name
        on its way to deletion is usually out of the zone, so DNS says NXDOMAIN unless
        `delegated`."""
        self.dns_server.zones[domain] = "ns" if delegated else "nxdomain"
        body = rdap_domain(domain, statuses, last_changed=last_changed, expires=expires)
        self.rdap_server.routes[f"/rdap/domain/{domain}"] = [(200, {}, body, 0.0)]

    def rdap_broken_only(self, domain: str) -> None:
        """DNS shows it delegated; the registry's RDAP server answers 503."""
        self.dns_server.zones[domain] = "ns"
        self.rdap_server.routes[f"/rdap/domain/{domain}"] = [BROKEN_RDAP]

    def broken(self, domain: str) -> None:
        self.dns_server.zones[domain] = "servfail"
        self.rdap_server.routes[f"/rdap/domain/{domain}"] = [BROKEN_RDAP]

    def rdap_hits(self, domain: str) -> int:
        return self.rdap_server.hits_snapshot()[f"/rdap/domain/{domain}"]

    def close(self) -> None:
        self.http.close()
        self.rdap_server.close()
        self.dns_server.close()


def rdap_domain(
    domain: str,
    statuses: Sequence[str],
    *,
    last_changed: str | None = None,
    expires: str | None = None,
) -> bytes:
    """An RDAP domain object with these statuses and events, as a registry serves it."""
    events: list[dict[str, Any]] = [
        {"eventAction": "registration", "eventDate": "2015-03-01T10:00:00Z"}
    ]
    if expires is not None:
        events.append({"eventAction": "expiration", "eventDate": f"{expires}T10:00:00Z"})
    if last_changed is not None:
        events.append({"eventAction": "last changed", "eventDate": f"{last_changed}T18:04:11Z"})
    document = {
        "objectClassName": "domain",
        "ldhName": domain.upper(),
        "status": list(statuses),
        "events": events,
    }
    return json.dumps(document).encode()


def provider_settings(database_url: str, registry: Registry, bootstrap_dir: str) -> dict[str, str]:
    """Settings for the real providers pointed at `registry`'s loopback servers."""
    path = Path(bootstrap_dir) / "bootstrap.json"
    base = registry.rdap_server.base.rstrip("/")
    path.write_text(json.dumps(bootstrap_doc(base, registry.tlds)))
    return {
        "DATABASE_URL": database_url,
        "DOMINUS_PROVIDERS": "real",
        "DNS_RESOLVERS": registry.dns_server.address,
        "DNS_TIMEOUT_MS": "500",
        "RDAP_BOOTSTRAP_PATH": str(path),
        "RDAP_TIMEOUT_MS": "500",
        "RDAP_MAX_ATTEMPTS": "1",
        "WATCHLIST_RDAP_DELAY_MS": "0",
    }
