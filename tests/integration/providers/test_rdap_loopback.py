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

from dominus import bounded_http
from dominus.providers.errors import BootstrapError
from dominus.providers.models import Availability, RdapRecord
from dominus.providers.rdap import HttpRdapClient
from dominus.providers.rdap_bootstrap import RdapBootstrap, refresh_bootstrap
from tests.support.fakes.drip_server import DripServer
from tests.support.fakes.rdap_server import FakeRdap, Reply, bootstrap_doc
from tests.support.polling import outcome_within

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


def rdap_client(fake: FakeRdap | str, http: httpx.Client, **kwargs: float) -> HttpRdapClient:
    """A client sending `.test` to the fake (or to the base URL given)."""
    base = fake if isinstance(fake, str) else fake.base
    bootstrap = RdapBootstrap.parse(bootstrap_doc(base.rstrip("/")))  # slash added back
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


def test_a_redirect_to_another_loopback_service_is_not_followed(
    fake: FakeRdap, http: httpx.Client
) -> None:
    """A registry cannot send the worker to a service of its own machine or network (blind
    SSRF), and what that service answers (here a 404) never makes a name available."""
    internal = FakeRdap()
    secret = internal.base.replace("/rdap/", "/internal-admin/secret")
    fake.routes["/rdap/domain/moved.test"] = [(302, {"Location": secret}, b"", 0.0)]
    try:
        record = rdap_client(fake, http).lookup("moved.test")
        assert internal.total_hits() == 0
    finally:
        internal.close()
    assert record.availability is Availability.UNKNOWN
    assert "refused: a loopback address" in record.detail
    assert fake.hits["/rdap/domain/moved.test"] == 1  # the same answer again: not retried


def test_a_redirect_to_another_scheme_is_not_followed(fake: FakeRdap, http: httpx.Client) -> None:
    elsewhere = fake.base.replace("http://", "https://") + "domain/moved.test"
    fake.routes["/rdap/domain/moved.test"] = [(301, {"Location": elsewhere}, b"", 0.0)]
    record = rdap_client(fake, http).lookup("moved.test")
    assert record.availability is Availability.UNKNOWN
    assert "redirect from http to https refused" in record.detail


def test_a_404_from_another_host_is_not_available(
    fake: FakeRdap, http: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even where a redirect to another host is followed (a public one; here the rule is told
    to take loopback for public), only the registry's own 404 says "available"."""
    monkeypatch.setattr(bounded_http, "_non_public_kind", lambda address: None)
    other = FakeRdap()  # answers 404 to everything
    target = other.base + "domain/moved.test"
    fake.routes["/rdap/domain/moved.test"] = [(302, {"Location": target}, b"", 0.0)]
    try:
        record = rdap_client(fake, http).lookup("moved.test")
        assert other.hits["/rdap/domain/moved.test"] == 1
    finally:
        other.close()
    assert record.availability is Availability.UNKNOWN
    assert record.detail.startswith("HTTP 404 at 127.0.0.1:"), record.detail
    assert "not the registry's" in record.detail


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


@pytest.mark.parametrize(
    "body",
    [
        b"{}",
        b"[]",
        b'"domain"',
        b'{"objectClassName": "entity", "handle": "X"}',
        b'{"errorCode": 200, "title": "maintenance"}',
        b'{"objectClassName": ["domain"]}',
        b"[" * 200_000,  # nested past the JSON parser's recursion limit
        b"\xff\xfe{}",
    ],
)
def test_a_200_that_is_not_an_rdap_domain_object_is_unknown(
    fake: FakeRdap, http: httpx.Client, body: bytes
) -> None:
    fake.routes["/rdap/domain/odd.test"] = [(200, {}, body, 0.0)]
    record = rdap_client(fake, http).lookup("odd.test")
    assert record.availability is Availability.UNKNOWN
    assert record.detail.endswith("but not RDAP JSON"), record.detail


def test_a_domain_object_without_its_class_name_still_counts(
    fake: FakeRdap, http: httpx.Client
) -> None:
    fake.routes["/rdap/domain/old.test"] = [(200, {}, b'{"ldhName": "OLD.TEST"}', 0.0)]
    assert rdap_client(fake, http).lookup("old.test").availability is Availability.REGISTERED


@pytest.mark.parametrize(
    "when",
    [
        "9999-12-31T23:59:59-23:59",  # past year 9999 in UTC
        "0001-01-01T00:00:00+23:59",  # before year 1 in UTC
        "2030-02-30T00:00:00Z",
        ["2030-01-01"],
    ],
)
def test_an_event_date_out_of_range_is_no_date(
    fake: FakeRdap, http: httpx.Client, when: object
) -> None:
    body = {
        "objectClassName": "domain",
        "events": [
            {"eventAction": "expiration", "eventDate": when},
            {"eventAction": "registration", "eventDate": "2001-02-03T04:05:06Z"},
            {"eventAction": ["registration"], "eventDate": "1999-01-01"},
        ],
    }
    fake.routes["/rdap/domain/far.test"] = [(200, {}, json.dumps(body).encode(), 0.0)]
    record = rdap_client(fake, http).lookup("far.test")
    assert record.availability is Availability.REGISTERED
    assert (record.registered_at, record.expires_at) == (date(2001, 2, 3), None)


def test_an_answer_past_the_cap_is_unknown_and_not_asked_again(
    fake: FakeRdap, http: httpx.Client
) -> None:
    """A valid domain object, but 300 KiB of it: no registry answers that, and reading it
    whole is how a hostile server fills the memory."""
    body = json.dumps({"objectClassName": "domain", "remarks": ["x" * 300 * 1024]}).encode()
    fake.routes["/rdap/domain/huge.test"] = [(200, {}, body, 0.0)]
    record = rdap_client(fake, http).lookup("huge.test")
    assert record.availability is Availability.UNKNOWN
    assert record.detail.startswith("answer over 256 KiB at 127.0.0.1:"), record.detail
    assert fake.hits["/rdap/domain/huge.test"] == 1


def test_a_dripping_registry_is_cut_off_at_the_deadline(http: httpx.Client) -> None:
    """One byte a second never lets a read time out; RDAP_TIMEOUT_MS bounds the whole
    exchange all the same (the answer alone would take the server minutes)."""
    drip = DripServer(interval=1.0)
    try:
        client = rdap_client(drip.url + "/rdap", http, timeout_seconds=1.5, max_attempts=2)
        outcome = outcome_within(lambda: client.lookup("drip.test"))
    finally:
        drip.close()
    assert isinstance(outcome, RdapRecord), outcome
    assert outcome.availability is Availability.UNKNOWN
    assert outcome.detail.startswith("timeout after 1.5 s after 2 attempts"), outcome.detail


def test_a_stop_ends_a_dripping_lookup(http: httpx.Client) -> None:
    drip = DripServer(interval=1.0)
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    try:
        client = rdap_client(drip.url + "/rdap", http, timeout_seconds=600)
        outcome = outcome_within(lambda: client.lookup("drip.test", stop))
    finally:
        drip.close()
    assert isinstance(outcome, RdapRecord), outcome
    assert (outcome.availability, outcome.detail) == (Availability.UNKNOWN, "stopped")
    assert drip.request_count() == 1


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


def test_refresh_bootstrap_refuses_a_flood(
    fake: FakeRdap, http: httpx.Client, tmp_path: Path
) -> None:
    """A valid document, but 5 MiB of it: IANA's is about 100 KB."""
    document = bootstrap_doc(fake.base) | {"padding": "x" * 5 * 1024 * 1024}
    fake.routes["/dns.json"] = [(200, {}, json.dumps(document).encode(), 0.0)]
    target = tmp_path / "bootstrap.json"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(BootstrapError, match="answer over 4 MiB"):
        refresh_bootstrap(fake.base.replace("/rdap/", "/dns.json"), target, http)
    assert target.read_text(encoding="utf-8") == "old"


def test_refresh_bootstrap_refuses_a_redirect_inwards(
    fake: FakeRdap, http: httpx.Client, tmp_path: Path
) -> None:
    internal = FakeRdap()
    internal.routes["/rdap/dns.json"] = [
        (200, {}, json.dumps(bootstrap_doc(fake.base)).encode(), 0)
    ]
    fake.routes["/moved.json"] = [(302, {"Location": internal.base + "dns.json"}, b"", 0.0)]
    target = tmp_path / "bootstrap.json"
    target.write_text("old", encoding="utf-8")
    try:
        with pytest.raises(BootstrapError, match="refused: a loopback address"):
            refresh_bootstrap(fake.base.replace("/rdap/", "/moved.json"), target, http)
        assert internal.total_hits() == 0
    finally:
        internal.close()
    assert target.read_text(encoding="utf-8") == "old"


@pytest.mark.parametrize(
    "reply",
    [
        (200, {}, b"not json", 0.0),
        (200, {}, b"[" * 200_000, 0.0),
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


@pytest.mark.parametrize(
    "url",
    [
        "http://data.iana.example/rdap/dns.json",  # plain http across a network
        "http://10.0.0.5/dns.json",
        "ftp://data.iana.org/rdap/dns.json",
        "data.iana.org/rdap/dns.json",
    ],
)
def test_a_bootstrap_source_anyone_on_the_path_could_rewrite_is_refused(
    url: str, tmp_path: Path
) -> None:
    target = tmp_path / "bootstrap.json"
    target.write_text("kept")

    def never(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"asked {request.url}")

    with (
        httpx.Client(transport=httpx.MockTransport(never)) as client,
        pytest.raises(BootstrapError, match=r"refusing|not an http"),
    ):
        refresh_bootstrap(url, target, client)
    assert target.read_text() == "kept"
