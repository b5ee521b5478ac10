"""HttpRdapClient and refresh_bootstrap against a real HTTP server on loopback."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import httpx
import pytest

from dominus.providers.errors import BootstrapError
from dominus.providers.models import Availability
from dominus.providers.rdap import HttpRdapClient
from dominus.providers.rdap_bootstrap import RdapBootstrap, refresh_bootstrap
from tests.fakes.rdap_server import FakeRdap, Reply, bootstrap_doc

REGISTERED_BODY = json.dumps(
    {
        "objectClassName": "domain",
        "ldhName": "TAKEN.TEST",
        "events": [
            {"eventAction": "registration", "eventDate": "2001-02-03T04:05:06Z"},
            {"eventAction": "expiration", "eventDate": "not a date"},
            {"eventAction": "last changed", "eventDate": "2024-01-01T00:00:00Z"},
        ],
    }
).encode()


@pytest.fixture
def fake() -> Iterator[FakeRdap]:
    server = FakeRdap()
    yield server
    server.close()


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client() as client:
        yield client


def rdap_client(fake: FakeRdap, http: httpx.Client, **kwargs: float) -> HttpRdapClient:
    bootstrap = RdapBootstrap.parse(bootstrap_doc(fake.base.rstrip("/")))  # slash added back
    options: dict[str, float] = {"timeout_seconds": 0.5, "backoff_base_seconds": 0.01}
    options.update(kwargs)
    return HttpRdapClient(
        bootstrap,
        http,
        timeout_seconds=options["timeout_seconds"],
        max_attempts=int(options.get("max_attempts", 3)),
        backoff_base_seconds=options["backoff_base_seconds"],
    )


def test_404_is_available(fake: FakeRdap, http: httpx.Client) -> None:
    record = rdap_client(fake, http).lookup("Free.TEST.")
    assert record.domain == "free.test"
    assert record.availability is Availability.AVAILABLE
    assert "HTTP 404" in record.detail
    assert fake.hits["/rdap/domain/free.test"] == 1


def test_an_invalid_name_is_not_asked_about(fake: FakeRdap, http: httpx.Client) -> None:
    """An A-label IDNA refuses (here an emoji, U+1F4A9) is unknown, never sent to a registry."""
    record = rdap_client(fake, http).lookup("xn--ls8h.test")
    assert record.availability is Availability.UNKNOWN
    assert record.detail.startswith("not a valid domain name:"), record.detail
    assert fake.total_hits() == 0
    assert rdap_client(fake, http).lookup("Bücher.TEST").domain == "xn--bcher-kva.test"


def test_200_is_registered_with_dates(fake: FakeRdap, http: httpx.Client) -> None:
    fake.routes["/rdap/domain/taken.test"] = [(200, {}, REGISTERED_BODY, 0.0)]
    record = rdap_client(fake, http).lookup("taken.test")
    assert record.availability is Availability.REGISTERED
    assert record.registered_at == date(2001, 2, 3)
    assert record.expires_at is None  # garbled date tolerated


def test_503_with_retry_after_then_200(fake: FakeRdap, http: httpx.Client) -> None:
    fake.routes["/rdap/domain/busy.test"] = [
        (503, {"Retry-After": "0"}, b"", 0.0),
        (200, {}, REGISTERED_BODY, 0.0),
    ]
    record = rdap_client(fake, http, backoff_base_seconds=5).lookup("busy.test")
    assert record.availability is Availability.REGISTERED
    assert fake.hits["/rdap/domain/busy.test"] == 2


def test_429_every_time_gives_up_after_max_attempts(fake: FakeRdap, http: httpx.Client) -> None:
    fake.routes["/rdap/domain/limited.test"] = [(429, {}, b"", 0.0)]
    record = rdap_client(fake, http).lookup("limited.test")
    assert record.availability is Availability.UNKNOWN
    assert record.detail.startswith("HTTP 429 after 3 attempts")
    assert fake.hits["/rdap/domain/limited.test"] == 3


def test_redirect_is_followed(fake: FakeRdap, http: httpx.Client) -> None:
    fake.routes["/rdap/domain/moved.test"] = [
        (302, {"Location": "/registrar/domain/moved.test"}, b"", 0.0)
    ]
    fake.routes["/registrar/domain/moved.test"] = [(200, {}, REGISTERED_BODY, 0.0)]
    record = rdap_client(fake, http).lookup("moved.test")
    assert record.availability is Availability.REGISTERED
    assert fake.hits["/registrar/domain/moved.test"] == 1


def test_slow_server_times_out_and_is_retried(fake: FakeRdap, http: httpx.Client) -> None:
    fake.routes["/rdap/domain/slow.test"] = [(200, {}, REGISTERED_BODY, 1.0)]
    record = rdap_client(fake, http, timeout_seconds=0.2, max_attempts=2).lookup("slow.test")
    assert record.availability is Availability.UNKNOWN
    assert "timeout" in record.detail
    assert fake.hits["/rdap/domain/slow.test"] == 2


def test_garbage_json_is_unknown(fake: FakeRdap, http: httpx.Client) -> None:
    fake.routes["/rdap/domain/garbage.test"] = [(200, {}, b"<html>oops", 0.0)]
    record = rdap_client(fake, http).lookup("garbage.test")
    assert record.availability is Availability.UNKNOWN
    assert "not RDAP JSON" in record.detail
    assert fake.hits["/rdap/domain/garbage.test"] == 1


def test_other_status_is_unknown_without_retry(fake: FakeRdap, http: httpx.Client) -> None:
    fake.routes["/rdap/domain/denied.test"] = [(403, {}, b"", 0.0)]
    record = rdap_client(fake, http).lookup("denied.test")
    assert record.availability is Availability.UNKNOWN
    assert "HTTP 403" in record.detail
    assert fake.hits["/rdap/domain/denied.test"] == 1


def test_no_service_for_tld(fake: FakeRdap, http: httpx.Client) -> None:
    record = rdap_client(fake, http).lookup("example.zz")
    assert record.availability is Availability.UNKNOWN
    assert record.detail == "no RDAP service for .zz"


def test_stop_signal_interrupts_the_backoff(fake: FakeRdap, http: httpx.Client) -> None:
    fake.routes["/rdap/domain/limited.test"] = [(429, {"Retry-After": "30"}, b"", 0.0)]
    stop = threading.Event()
    threading.Timer(0.2, stop.set).start()
    started = time.monotonic()
    record = rdap_client(fake, http).lookup("limited.test", stop=stop)
    assert record.detail == "stopped"
    assert time.monotonic() - started < 5
    assert fake.hits["/rdap/domain/limited.test"] == 1


def test_refresh_bootstrap_replaces_the_file(
    fake: FakeRdap, http: httpx.Client, tmp_path: Path
) -> None:
    fake.routes["/dns.json"] = [(200, {}, json.dumps(bootstrap_doc(fake.base)).encode(), 0.0)]
    target = tmp_path / "bootstrap.json"
    target.write_text("old", encoding="utf-8")
    count = refresh_bootstrap(fake.base.replace("/rdap/", "/dns.json"), target, http)
    assert count == 1
    assert RdapBootstrap.load(target).base_urls("x.test") == [fake.base]
    assert list(tmp_path.iterdir()) == [target]  # no temp file left behind


@pytest.mark.parametrize(
    "reply",
    [
        (200, {}, b"not json", 0.0),
        (200, {}, b'{"services": "nope"}', 0.0),
        (200, {}, b'{"services": [[["com"]]]}', 0.0),
        (500, {}, b"", 0.0),
    ],
)
def test_refresh_bootstrap_keeps_the_old_file_on_failure(
    fake: FakeRdap, http: httpx.Client, tmp_path: Path, reply: Reply
) -> None:
    fake.routes["/dns.json"] = [reply]
    target = tmp_path / "bootstrap.json"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(BootstrapError):
        refresh_bootstrap(fake.base.replace("/rdap/", "/dns.json"), target, http)
    assert target.read_text(encoding="utf-8") == "old"
    assert list(tmp_path.iterdir()) == [target]
