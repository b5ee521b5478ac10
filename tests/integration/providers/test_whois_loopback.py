"""WhoisClient (and the RDAP client's fallback to it) against a real TCP server on loopback."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import date

import pytest

from dominus.providers.models import Availability
from dominus.providers.whois import WhoisClient
from dominus.providers.whois_servers import WhoisServers
from tests.fakes.whois_server import FakeWhois, WhoisReply

REGISTERED = WhoisReply(
    "Domain Name: TAKEN.TEST\r\n"
    "Registrar: Example Registrar\r\n"
    "Creation Date: 2001-02-03T04:05:06Z\r\n"
    "Registry Expiry Date: 2031-02-03T04:05:06Z\r\n"
    "Domain Status: ok\r\n"
    "% Terms of use: queries beyond the limit are blacklisted; try again later.\r\n"
)
RATE_LIMITED = WhoisReply(
    'Error for "{query}".\r\nThe WHOIS query quota for 127.0.0.1 has been exceeded\r\n'
    "and will be replenished in 2 seconds.\r\n"
)


@pytest.fixture
def fake() -> Iterator[FakeWhois]:
    server = FakeWhois()
    yield server
    server.close()


def whois_client(fake: FakeWhois, **options: float) -> WhoisClient:
    servers = WhoisServers.parse({"servers": {"test": {"host": fake.address}}})
    return WhoisClient(
        servers,
        timeout_seconds=options.get("timeout_seconds", 2.0),
        max_attempts=int(options.get("max_attempts", 3)),
        backoff_base_seconds=options.get("backoff_base_seconds", 0.01),
        max_answer_bytes=int(options.get("max_answer_bytes", 64 * 1024)),
    )


def test_no_match_is_available(fake: FakeWhois) -> None:
    record = whois_client(fake).lookup("Free.TEST.")
    assert (record.domain, record.availability, record.source) == (
        "free.test",
        Availability.AVAILABLE,
        "whois",
    )
    assert record.detail == f"no match at WHOIS {fake.address}: 'No match for \"free.test\".'"
    assert fake.hits["free.test"] == 1


def test_a_record_is_registered_with_dates(fake: FakeWhois) -> None:
    """Boilerplate mentioning limits and blacklisting at the end is not a refusal."""
    fake.replies["taken.test"] = [REGISTERED]
    record = whois_client(fake).lookup("taken.test")
    assert record.availability is Availability.REGISTERED
    assert (record.registered_at, record.expires_at) == (date(2001, 2, 3), date(2031, 2, 3))
    assert record.source == "whois"
    assert fake.hits["taken.test"] == 1


def test_rate_limited_then_answered(fake: FakeWhois) -> None:
    fake.replies["busy.test"] = [RATE_LIMITED, RATE_LIMITED, REGISTERED]
    record = whois_client(fake).lookup("busy.test")
    assert record.availability is Availability.REGISTERED
    assert fake.hits["busy.test"] == 3


def test_rate_limited_every_time_is_unknown_after_max_attempts(fake: FakeWhois) -> None:
    fake.replies["limited.test"] = [RATE_LIMITED]
    record = whois_client(fake).lookup("limited.test")
    assert record.availability is Availability.UNKNOWN
    assert record.detail.startswith("rate limited (")
    assert record.detail.endswith(f"after 3 attempts at WHOIS {fake.address}")
    assert fake.hits["limited.test"] == 3


def test_slow_server_times_out_and_is_unknown(fake: FakeWhois) -> None:
    fake.replies["slow.test"] = [WhoisReply('No match for "slow.test".\r\n', delay=1.0)]
    record = whois_client(fake, timeout_seconds=0.2, max_attempts=2).lookup("slow.test")
    assert record.availability is Availability.UNKNOWN  # never available on a timeout
    assert record.detail.startswith("timeout after 0.2 s after 2 attempts")
    assert fake.hits["slow.test"] == 2


def test_connection_refused_is_unknown() -> None:
    fake = FakeWhois()
    client = whois_client(fake, max_attempts=2)
    fake.close()  # nothing listens on the port any more
    record = client.lookup("gone.test")
    assert record.availability is Availability.UNKNOWN
    assert "ConnectionRefusedError" in record.detail
    assert record.detail.endswith("after 2 attempts at WHOIS " + fake.address)


def test_oversized_answer_is_capped_and_unknown(fake: FakeWhois) -> None:
    flood = b"No match for flood.test\r\n" + b"x" * 200_000
    fake.replies["flood.test"] = [WhoisReply(raw=flood)]
    record = whois_client(fake, max_answer_bytes=16 * 1024).lookup("flood.test")
    assert record.availability is Availability.UNKNOWN
    assert record.detail == f"answer over 16 KiB from WHOIS {fake.address}"
    assert fake.hits["flood.test"] == 1  # the same flood would come again: not retried


def test_empty_answer_is_retried_then_unknown(fake: FakeWhois) -> None:
    fake.replies["mute.test"] = [WhoisReply("% nothing to say\r\n")]
    record = whois_client(fake, max_attempts=2).lookup("mute.test")
    assert record.availability is Availability.UNKNOWN
    assert record.detail.startswith("empty answer after 2 attempts")


def test_refusal_is_unknown_without_retry(fake: FakeWhois) -> None:
    fake.replies["denied.test"] = [WhoisReply("%ERROR:201: access denied\r\n")]
    record = whois_client(fake).lookup("denied.test")
    assert record.availability is Availability.UNKNOWN
    assert record.detail.startswith(f"refused at WHOIS {fake.address}")
    assert fake.hits["denied.test"] == 1


def test_unknown_tld_and_invalid_name_are_not_asked(fake: FakeWhois) -> None:
    client = whois_client(fake)
    assert client.lookup("example.zz").detail == "no WHOIS server known for .zz"
    assert client.lookup("xn--ls8h.test").detail.startswith("not a valid domain name:")
    assert fake.total_hits() == 0


def test_stop_signal_interrupts_the_backoff(fake: FakeWhois) -> None:
    fake.replies["limited.test"] = [RATE_LIMITED]
    stop = threading.Event()
    threading.Timer(0.2, stop.set).start()
    record = whois_client(fake, backoff_base_seconds=30).lookup("limited.test", stop=stop)
    assert record.detail == "stopped"
    assert fake.hits["limited.test"] == 1
