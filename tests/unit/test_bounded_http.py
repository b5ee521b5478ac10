"""One outside HTTP exchange, bounded as a whole: against loopback servers that drip, flood or
redirect, and the redirect rule on its own."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import pytest

from dominus.bounded_http import (
    AnswerTooLargeError,
    ExchangeStoppedError,
    ExchangeTimeoutError,
    RedirectRefusedError,
    check_redirect,
    exchange,
    fetch,
    same_origin,
)
from tests.support.fakes.drip_server import DripServer
from tests.support.fakes.rdap_server import FakeRdap
from tests.support.polling import outcome_within


@pytest.fixture
def drip() -> Iterator[DripServer]:
    server = DripServer(interval=1.0)
    yield server
    server.close()


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client() as client:
        yield client


def test_a_dripping_server_is_cut_off_at_the_deadline(drip: DripServer, http: httpx.Client) -> None:
    """One byte a second never lets a read time out; the whole exchange's deadline still ends
    it (the headers alone take the server minutes)."""
    outcome = outcome_within(
        lambda: exchange(http, "GET", drip.url + "/x", deadline_seconds=1.5, max_bytes=1024)
    )
    assert isinstance(outcome, ExchangeTimeoutError), outcome
    assert str(outcome) == "timeout after 1.5 s"


def test_a_stop_ends_a_dripping_exchange(drip: DripServer, http: httpx.Client) -> None:
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    outcome = outcome_within(
        lambda: exchange(
            http, "GET", drip.url + "/x", deadline_seconds=600, max_bytes=1024, stop=stop
        )
    )
    assert isinstance(outcome, ExchangeStoppedError), outcome


def test_a_posted_body_gets_the_status_only(http: httpx.Client) -> None:
    server = DripServer(b"HTTP/1.1 204 No Content\r\n\r\n", interval=0, chunk_size=1024)
    try:
        answer = exchange(
            http, "POST", server.url + "/hook", deadline_seconds=5, max_bytes=0, json_body={"a": 1}
        )
    finally:
        server.close()
    assert (answer.status, answer.body) == (204, b"")
    assert server.requests == ["POST /hook HTTP/1.1"]


def test_an_answer_past_the_cap_is_refused_declared_or_not(http: httpx.Client) -> None:
    fake = FakeRdap()
    fake.routes["/big"] = [(200, {}, b"x" * 5000, 0.0)]  # Content-Length says so up front
    undeclared = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + b"y" * 300_000
    flood = DripServer(undeclared, interval=0, chunk_size=65536)  # read until the close
    try:
        for url in (fake.base.replace("/rdap/", "/big"), flood.url + "/big"):
            with pytest.raises(AnswerTooLargeError, match="answer over 4 KiB"):
                exchange(http, "GET", url, deadline_seconds=5, max_bytes=4096)
        assert (
            exchange(http, "GET", url, deadline_seconds=5, max_bytes=300_000).body
            == (undeclared.partition(b"\r\n\r\n")[2])
        )
    finally:
        fake.close()
        flood.close()


def test_a_redirect_on_the_same_origin_is_followed(http: httpx.Client) -> None:
    fake = FakeRdap()
    fake.routes["/old"] = [(302, {"Location": "/new"}, b"", 0.0)]
    fake.routes["/new"] = [(200, {}, b"here", 0.0)]
    try:
        answer = fetch(
            http, fake.base.replace("/rdap/", "/old"), deadline_seconds=5, max_bytes=1024
        )
    finally:
        fake.close()
    assert (answer.status, answer.body, answer.url.path) == (200, b"here", "/new")


def test_a_redirect_to_another_loopback_service_is_not_followed(http: httpx.Client) -> None:
    registry, secret = FakeRdap(), FakeRdap()
    target = secret.base.replace("/rdap/", "/internal-admin/secret")
    registry.routes["/rdap/domain/x.test"] = [(302, {"Location": target}, b"", 0.0)]
    try:
        with pytest.raises(RedirectRefusedError, match=r"refused: a loopback address"):
            fetch(http, registry.base + "domain/x.test", deadline_seconds=5, max_bytes=1024)
        assert secret.total_hits() == 0
    finally:
        registry.close()
        secret.close()


def test_endless_redirects_end(http: httpx.Client) -> None:
    fake = FakeRdap()
    fake.routes["/loop"] = [(302, {"Location": "/loop"}, b"", 0.0)]
    try:
        with pytest.raises(RedirectRefusedError, match="more than 5 redirects"):
            fetch(http, fake.base.replace("/rdap/", "/loop"), deadline_seconds=5, max_bytes=1024)
    finally:
        fake.close()


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("http://rdap.example/x", "from https to http"),
        ("ftp://rdap.example/x", "from https to ftp"),
        ("https://127.0.0.1/x", "a loopback address"),
        ("https://[::ffff:127.0.0.1]/x", "a loopback address"),
        ("https://169.254.169.254/latest/meta-data", "a link-local address"),
        ("https://10.1.2.3/x", "a private address"),
        ("https://192.168.0.1/x", "a private address"),
        ("https://[fd00::1]/x", "a private address"),
        ("https://224.0.0.1/x", "a multicast address"),
        ("https://0.0.0.0/x", "a private address"),
        ("https://100.64.0.1/x", "a non-public address"),
        ("https://localhost/x", "a loopback address"),
    ],
)
def test_redirects_the_rule_refuses(target: str, why: str) -> None:
    with pytest.raises(RedirectRefusedError, match=why):
        check_redirect(httpx.URL("https://rdap.example/domain/x"), httpx.URL(target))


@pytest.mark.parametrize(
    "target",
    [
        "https://rdap.example/elsewhere",  # the same origin, whatever its addresses
        "https://RDAP.example:443/x",
        "https://8.8.8.8/x",  # another host, public
        "https://[2001:4860:4860::8888]/x",
    ],
)
def test_redirects_the_rule_allows(target: str) -> None:
    check_redirect(httpx.URL("https://rdap.example/domain/x"), httpx.URL(target))


def test_the_same_origin_is_scheme_host_and_port() -> None:
    first = httpx.URL("http://127.0.0.1:8080/rdap/domain/x")
    assert same_origin(first, httpx.URL("http://127.0.0.1:8080/other"))
    assert not same_origin(first, httpx.URL("http://127.0.0.1:8081/rdap/domain/x"))
    assert not same_origin(first, httpx.URL("https://127.0.0.1:8080/rdap/domain/x"))
    assert same_origin(httpx.URL("https://a.example/"), httpx.URL("https://a.example:443/"))
