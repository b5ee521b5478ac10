"""Host names as Host headers, Origins and DOMINUS_ALLOWED_HOSTS write them, and the allow-list
the API checks them against (ADR 0008)."""

from __future__ import annotations

import pytest

from dominus.api.request_guards import HostAllowList
from dominus.host_names import HostPort, is_loopback, parse_host, parse_host_list


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("localhost", HostPort("localhost")),
        ("LocalHost:8000", HostPort("localhost", 8000)),
        ("127.0.0.1:1", HostPort("127.0.0.1", 1)),
        ("[::1]", HostPort("::1")),
        ("[0:0::1]:65535", HostPort("::1", 65535)),
        ("my_service.internal", HostPort("my_service.internal")),
        (" dominus.example.com ", HostPort("dominus.example.com")),
    ],
)
def test_hosts_parse_to_one_canonical_form(text: str, parsed: HostPort) -> None:
    assert parse_host(text) == parsed


@pytest.mark.parametrize(
    "text",
    [
        "",
        "a b",
        "*.example.com",
        "http://x",
        "x:0",
        "x:65536",
        "x:",
        "x:8o",
        "[::1",
        "[1.2.3.4]",
        "::1",
        "-bad.example",
        "a..b",
        "x" * 64 + ".example",
        "é.example",
    ],
)
def test_anything_else_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_host(text)


def test_a_list_ignores_empty_entries() -> None:
    assert parse_host_list(" a.example, ,b.example:81,") == (
        HostPort("a.example"),
        HostPort("b.example", 81),
    )
    assert parse_host_list("") == ()


def test_loopback() -> None:
    assert all(is_loopback(host) for host in ("localhost", "127.0.0.1", "127.255.0.1", "::1"))
    assert not any(is_loopback(host) for host in ("0.0.0.0", "::", "192.0.2.1", "localhost.a"))


def test_the_allow_list() -> None:
    default = HostAllowList.build(None, "")
    assert default.allows_text("localhost:1") and default.allows_text("[::1]")
    assert not default.allows_text("") and not default.allows_text("192.0.2.1")
    everywhere = HostAllowList.build("::", "named.example:9")
    assert everywhere.allows_text("192.0.2.1") and everywhere.allows_text("[2001:db8::2]:80")
    assert everywhere.allows_text("named.example:9")
    assert not everywhere.allows_text("named.example:10")
    assert not everywhere.allows_text("other.example")


def test_origins() -> None:
    hosts = HostAllowList.build(None, "dominus.example.com")
    assert hosts.allows_origin("https://dominus.example.com")
    assert hosts.allows_origin("http://localhost:8000")
    for origin in ("null", "", "dominus.example.com", "ftp://localhost", "http://x.example"):
        assert not hosts.allows_origin(origin), origin
