"""ResolverDnsChecker against real UDP DNS servers on loopback ports (never the internet)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from dominus.providers.dns import RegisteredNamesDns, ResolverDnsChecker, parse_resolver
from dominus.providers.models import Availability
from tests.support.fakes.dns_server import FakeDnsServer

ZONES = {
    "taken.com": "ns",
    "apex-only.com": "soa",
    "free.com": "nxdomain",
    "empty.com": "nodata",
    "broken.com": "servfail",
    "silent.com": "drop",
}


@pytest.fixture
def servers() -> Iterator[list[FakeDnsServer]]:
    started = [FakeDnsServer(dict(ZONES)) for _ in range(2)]
    yield started
    for server in started:
        server.close()


def checker(*servers: FakeDnsServer) -> ResolverDnsChecker:
    return ResolverDnsChecker([s.address for s in servers], timeout_seconds=0.3)


@pytest.mark.parametrize(
    ("domain", "availability", "reason"),
    [
        ("taken.com", Availability.REGISTERED, "NS present"),
        ("apex-only.com", Availability.REGISTERED, "SOA present"),
        ("free.com", Availability.AVAILABLE, "NXDOMAIN"),
        ("empty.com", Availability.AVAILABLE, "no NS or SOA"),
        ("broken.com", Availability.UNKNOWN, "SERVFAIL"),
        ("silent.com", Availability.UNKNOWN, "timeout"),
    ],
)
def test_one_resolver_answer_stands(
    servers: list[FakeDnsServer], domain: str, availability: Availability, reason: str
) -> None:
    verdict = checker(servers[0]).check(domain)
    assert verdict.availability is availability
    assert reason in verdict.detail
    assert servers[0].address in verdict.detail


def test_soa_is_asked_only_after_noerror_without_ns(servers: list[FakeDnsServer]) -> None:
    checker(servers[0]).check("empty.com")
    checker(servers[0]).check("free.com")
    assert servers[0].queries == [("empty.com", "NS"), ("empty.com", "SOA"), ("free.com", "NS")]


def test_two_resolvers_confirm_available(servers: list[FakeDnsServer]) -> None:
    verdict = checker(*servers).check("Free.COM.")
    assert verdict.domain == "free.com"
    assert verdict.availability is Availability.AVAILABLE
    assert verdict.detail == f"NXDOMAIN at {servers[0].address} and {servers[1].address}"


def test_registered_from_either_resolver_is_a_veto(servers: list[FakeDnsServer]) -> None:
    servers[0].zones["taken.com"] = "nxdomain"
    verdict = checker(*servers).check("taken.com")
    assert verdict.availability is Availability.REGISTERED
    assert verdict.detail == f"NS present at {servers[1].address}"


def test_available_unconfirmed_is_unknown(servers: list[FakeDnsServer]) -> None:
    servers[1].zones["free.com"] = "drop"
    verdict = checker(*servers).check("free.com")
    assert verdict.availability is Availability.UNKNOWN
    assert "unconfirmed" in verdict.detail
    assert "timeout" in verdict.detail


def test_both_unverifiable_is_unknown(servers: list[FakeDnsServer]) -> None:
    verdict = checker(*servers).check("broken.com")
    assert verdict.availability is Availability.UNKNOWN
    assert verdict.detail.count("SERVFAIL") == 2


def test_no_query_goes_out_once_the_stop_is_set(servers: list[FakeDnsServer]) -> None:
    """The first resolver's query runs its course (its timeout bounds it); the second
    resolver is not asked: the lookup ends as "stopped"."""
    stop = threading.Event()
    threading.Timer(0.2, stop.set).start()
    slow = ResolverDnsChecker([s.address for s in servers], timeout_seconds=1.0)
    verdict = slow.check("silent.com", stop)
    assert (verdict.availability, verdict.detail) == (Availability.UNKNOWN, "stopped")
    assert servers[0].queries == [("silent.com", "NS")]
    assert servers[1].queries == []


def test_nobody_listening_is_unknown() -> None:
    lonely = FakeDnsServer({})
    address = lonely.address
    lonely.close()  # the port is now closed: ICMP unreachable or a timeout, either is UNKNOWN
    verdict = ResolverDnsChecker([address], timeout_seconds=0.3).check("free.com")
    assert verdict.availability is Availability.UNKNOWN


def test_resolver_addresses_parse() -> None:
    assert parse_resolver("1.1.1.1").label == "1.1.1.1:53"
    assert parse_resolver("127.0.0.1:5353").port == 5353
    assert parse_resolver("[::1]:5353").label == "[::1]:5353"
    assert parse_resolver("::1").port == 53
    with pytest.raises(ValueError, match="resolver"):
        parse_resolver("127.0.0.1:notaport")


def test_registered_names_file(tmp_path: Path) -> None:
    path = tmp_path / "registered.txt"
    path.write_text("# comment\n\nExample.com  # trailing note\nfoo.io\n", encoding="utf-8")
    dns_file = RegisteredNamesDns(path)
    assert dns_file.check("example.com.").availability is Availability.REGISTERED
    assert dns_file.check("FOO.io").availability is Availability.REGISTERED
    assert dns_file.check("bar.io").availability is Availability.AVAILABLE


# --- canaries: a resolver that cannot find names that surely exist is not believed ----------


def test_a_resolver_denying_everything_makes_no_name_available() -> None:
    """No internet behind a resolver that answers NXDOMAIN for every name: the canaries
    (iana.org, the registry's own name) are not found, so NXDOMAIN says nothing."""
    denying = FakeDnsServer({}, default="nxdomain", canaries=False)
    try:
        verdict = ResolverDnsChecker([denying.address], timeout_seconds=0.3).check("free.com")
    finally:
        denying.close()
    assert verdict.availability is Availability.UNKNOWN
    assert verdict.canary_failed
    assert "iana.org" in verdict.detail and "no network?" in verdict.detail
    assert denying.queries == []  # the name itself was never asked: no answer would count


def test_canaries_are_asked_once_per_tld_and_resolver(servers: list[FakeDnsServer]) -> None:
    both = checker(*servers)
    for name in ("free.com", "taken.com", "other.com", "free.net"):
        both.check(name)
    for server in servers:
        assert sorted(server.canary_queries) == [
            ("gtld-servers.net", "NS"),
            ("iana.org", "NS"),
            ("verisign.com", "NS"),
        ]
    assert not both.check("free.com").canary_failed


def test_one_resolver_failing_its_canaries_leaves_the_other_unconfirmed(
    servers: list[FakeDnsServer],
) -> None:
    """The second resolver is not believed for .com: the first's NXDOMAIN stays unconfirmed."""
    servers[1].canaries = False
    verdict = checker(*servers).check("free.com")
    assert verdict.availability is Availability.UNKNOWN
    assert "unconfirmed" in verdict.detail and "canary" in verdict.detail
    assert not verdict.canary_failed  # one resolver was still believed


def test_a_tld_without_its_canary_is_not_believed(servers: list[FakeDnsServer]) -> None:
    servers[0].zones["nic.zz"] = "nxdomain"
    verdict = checker(servers[0]).check("free.zz")
    assert (verdict.availability, verdict.canary_failed) == (Availability.UNKNOWN, True)
    assert "nic.zz" in verdict.detail
