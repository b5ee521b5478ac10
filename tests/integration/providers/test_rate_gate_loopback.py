"""RDAP and WHOIS lookups at the rate gate, against real servers on loopback: every attempt
waits its turn, and a server that says "slow down" pauses every lookup to it. Rates are
checked by the server's own clock (when each request arrived), never by timing the client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from dominus.config import load_settings
from dominus.providers.models import Availability, StopSignal
from dominus.providers.rate_gate import (
    MAX_PAUSE_SECONDS,
    OnWait,
    RateGate,
    rdap_key,
    watched,
    whois_key,
)
from dominus.providers.rdap import HttpRdapClient
from dominus.providers.rdap_bootstrap import RdapBootstrap
from dominus.providers.setup import open_providers, rate_gate
from dominus.providers.whois import WhoisClient
from dominus.providers.whois_servers import WhoisServers
from tests.support.fakes.rdap_server import FakeRdap, bootstrap_doc
from tests.support.fakes.whois_server import FakeWhois, WhoisReply

NAMES = [f"name{number}.com" for number in range(20)]


@dataclass
class RecordingGate:
    """Lets everything through at once and writes down what it was asked."""

    calls: list[tuple[str, str]] = field(default_factory=list)
    pauses: list[tuple[str, float, str]] = field(default_factory=list)

    def acquire(self, key: str, stop: StopSignal | None, on_wait: OnWait | None = None) -> bool:
        self.calls.append(("acquire", key))
        return True

    def finished(self, key: str) -> None:
        self.calls.append(("finished", key))

    def pause(self, key: str, seconds: float, reason: str) -> None:
        self.pauses.append((key, seconds, reason))


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client() as client:
        yield client


def rdap_client(
    server: FakeRdap, http: httpx.Client, attempts: int, gate: RateGate | None = None
) -> HttpRdapClient:
    """A client sending `.com` to `server`, with 10 ms backoffs."""
    bootstrap = RdapBootstrap.parse(bootstrap_doc(server.base, ["com"]))
    return HttpRdapClient(
        bootstrap, http, 2, max_attempts=attempts, backoff_base_seconds=0.01, gate=gate
    )


def bootstrap_file(tmp_path: Path, server: FakeRdap) -> Path:
    path = tmp_path / "bootstrap.json"
    path.write_text(json.dumps(bootstrap_doc(server.base, ["com"])), encoding="utf-8")
    return path


def test_a_gate_at_the_servers_rate_keeps_every_lookup_under_it(tmp_path: Path) -> None:
    """The server allows 5 requests a second and answers 429 (Retry-After: 1) beyond; with
    PROVIDER_RATE_LIMITS at 5/s, four lookups at a time never see a 429 and all finish."""
    server = FakeRdap(rate_limit=(5, 1.0))
    try:
        settings = load_settings(
            DOMINUS_PROVIDERS="real",
            RDAP_BOOTSTRAP_PATH=str(bootstrap_file(tmp_path, server)),
            PROVIDER_RATE_LIMITS="127.0.0.1=5/s",
        )
        with open_providers(settings) as providers, ThreadPoolExecutor(4) as pool:
            records = list(pool.map(providers.rdap.lookup, NAMES))
    finally:
        server.close()
    assert [record.availability for record in records] == [Availability.AVAILABLE] * len(NAMES)
    assert len(server.arrivals) == len(NAMES)  # not one 429, so not one retry
    assert server.most_in_any_window(1.0) <= 5


def test_a_429_pauses_every_lookup_to_that_server(http: httpx.Client) -> None:
    """One lookup's 429 (Retry-After: 1, its last attempt) holds the next lookup, a different
    name, until a second after the refusal: by the server's clock."""
    server = FakeRdap()
    server.routes["/rdap/domain/first.com"] = [(429, {"Retry-After": "1"}, b"", 0.0)]
    try:
        client = rdap_client(server, http, 1)
        first = client.lookup("first.com")
        second = client.lookup("second.com")
    finally:
        server.close()
    assert first.detail.startswith("HTTP 429 after 1 attempt")
    assert second.availability is Availability.AVAILABLE
    refused, next_one = server.arrivals
    assert next_one - refused >= 1.0


def test_a_lookup_tries_again_after_the_pause_within_its_attempts(http: httpx.Client) -> None:
    server = FakeRdap()
    server.routes["/rdap/domain/busy.com"] = [
        (429, {"Retry-After": "1"}, b"", 0.0),
        (404, {}, b"{}", 0.0),
    ]
    try:
        client = rdap_client(server, http, 2)
        record = client.lookup("busy.com")
    finally:
        server.close()
    assert record.availability is Availability.AVAILABLE
    refused, retried = server.arrivals
    assert retried - refused >= 1.0  # the pause, not the 10 ms backoff


@pytest.mark.parametrize(
    ("reply", "pause"),
    [
        ((429, {"Retry-After": "120"}, b"", 0.0), 120.0),  # past the old 30 s cap: kept
        ((429, {"Retry-After": "999999"}, b"", 0.0), MAX_PAUSE_SECONDS),
        ((503, {"Retry-After": "7"}, b"", 0.0), 7.0),
        ((429, {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, b"", 0.0), 0.0),  # past date
    ],
)
def test_retry_after_pauses_the_servers_key(
    http: httpx.Client, reply: tuple[int, dict[str, str], bytes, float], pause: float
) -> None:
    server = FakeRdap(default=reply)
    gate = RecordingGate()
    try:
        client = rdap_client(server, http, 1, gate)
        client.lookup("slow.com")
    finally:
        server.close()
    key = rdap_key(server.base)
    assert [(paused_key, seconds) for paused_key, seconds, _ in gate.pauses] == [(key, pause)]
    assert f"HTTP {reply[0]} for slow.com" in gate.pauses[0][2]


def test_every_attempt_waits_at_the_gate_and_only_busy_answers_pause(
    http: httpx.Client,
) -> None:
    """A 503 without Retry-After is a server error, retried with backoff, pausing nobody; a
    429 without one pauses the server for the backoff."""
    server = FakeRdap()
    server.routes["/rdap/domain/broken.com"] = [(503, {}, b"", 0.0)]
    server.routes["/rdap/domain/limited.com"] = [(429, {}, b"", 0.0)]
    gate = RecordingGate()
    try:
        client = rdap_client(server, http, 3, gate)
        client.lookup("broken.com")
        assert gate.pauses == []
        client.lookup("limited.com")
    finally:
        server.close()
    key = rdap_key(server.base)
    assert gate.calls == [("acquire", key), ("finished", key)] * 6
    assert len(gate.pauses) == 3
    assert all(0 < seconds < 0.1 for _, seconds, _ in gate.pauses)  # the backoff: 10, 20, 40 ms


def test_a_whois_rate_limit_answer_pauses_the_whois_servers_key() -> None:
    fake = FakeWhois()
    fake.replies["busy.test"] = [
        WhoisReply("The WHOIS query quota for 127.0.0.1 has been exceeded\r\n"),
        WhoisReply('No match for "busy.test".\r\n'),
    ]
    gate = RecordingGate()
    try:
        servers = WhoisServers.parse({"servers": {"test": {"host": fake.address}}})
        client = WhoisClient(servers, 2, backoff_base_seconds=0.01, gate=gate)
        record = client.lookup("busy.test")
    finally:
        fake.close()
    key = whois_key(fake.address)
    assert record.availability is Availability.AVAILABLE
    assert gate.calls == [("acquire", key), ("finished", key)] * 2
    [(paused, seconds, reason)] = gate.pauses
    assert paused == key and 0 < seconds < 0.1 and "rate limited" in reason


def test_a_stopped_wait_at_the_gate_sends_nothing(http: httpx.Client) -> None:
    server = FakeRdap()

    class Stopped:
        def is_set(self) -> bool:
            return True

        def wait(self, timeout: float | None = None) -> bool:
            return True

    try:
        client = rdap_client(server, http, 3)
        record = client.lookup("x.com", Stopped())
    finally:
        server.close()
    assert record.detail == "stopped"
    assert server.arrivals == []


def test_waits_are_told_to_the_callers_hook(tmp_path: Path) -> None:
    """The gate the real providers are given is the one they wait at (here with a hook)."""
    server = FakeRdap()
    heard: list[tuple[str, datetime | None]] = []
    try:
        settings = load_settings(
            DOMINUS_PROVIDERS="real",
            RDAP_BOOTSTRAP_PATH=str(bootstrap_file(tmp_path, server)),
        )
        gate = rate_gate(settings)
        with open_providers(settings, gate=watched(gate, lambda k, u: heard.append((k, u)))) as p:
            # Paused right before the lookup (not before opening the providers, which may take
            # longer than the pause on a loaded machine): the lookup must wait for it.
            gate.pause(rdap_key(server.base), 0.5, "test")
            record = p.rdap.lookup("x.com")
    finally:
        server.close()
    assert record.availability is Availability.AVAILABLE
    key = rdap_key(server.base)
    assert [k for k, _ in heard] == [key, key]
    assert heard[0][1] is not None and heard[1][1] is None
