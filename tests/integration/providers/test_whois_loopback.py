"""WhoisClient (and the RDAP client's fallback to it) against a real TCP server on loopback."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import httpx
import pytest

from dominus.config import load_settings
from dominus.providers.errors import ProviderDataError
from dominus.providers.models import Availability
from dominus.providers.rdap import HttpRdapClient
from dominus.providers.rdap_bootstrap import RdapBootstrap
from dominus.providers.setup import open_providers
from dominus.providers.whois import WhoisClient
from dominus.providers.whois_servers import WhoisServers
from tests.support.fakes.rdap_server import FakeRdap, bootstrap_doc
from tests.support.fakes.whois_server import FakeWhois, WhoisReply

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


# --- the RDAP client's fallback, and the real provider set's wiring --------------------------
@pytest.fixture
def rdap() -> Iterator[FakeRdap]:
    server = FakeRdap()
    yield server
    server.close()


def test_rdap_client_asks_whois_for_a_tld_without_rdap(fake: FakeWhois, rdap: FakeRdap) -> None:
    with httpx.Client() as http:
        client = HttpRdapClient(
            RdapBootstrap.parse(bootstrap_doc(rdap.base, ["rdaptld"])),
            http,
            timeout_seconds=2,
            whois=whois_client(fake),
        )
        by_whois = client.lookup("free.test")
        by_rdap = client.lookup("free.rdaptld")
        neither = client.lookup("free.zz")
    assert (by_whois.availability, by_whois.source) == (Availability.AVAILABLE, "whois")
    assert (by_rdap.availability, by_rdap.source) == (Availability.AVAILABLE, "rdap")
    assert (fake.hits["free.test"], rdap.hits["/rdap/domain/free.test"]) == (1, 0)
    assert rdap.hits["/rdap/domain/free.rdaptld"] == 1 and fake.hits["free.rdaptld"] == 0
    assert neither.availability is Availability.UNKNOWN
    assert neither.detail == "no RDAP service or WHOIS server for .zz"


def test_real_providers_read_whois_servers_path(
    fake: FakeWhois, rdap: FakeRdap, tmp_path: Path
) -> None:
    bootstrap = tmp_path / "bootstrap.json"
    bootstrap.write_text(json.dumps(bootstrap_doc(rdap.base, ["com"])), encoding="utf-8")
    servers = tmp_path / "whois_servers.json"
    servers.write_text(json.dumps({"servers": {"uk": {"host": fake.address}}}), encoding="utf-8")
    fake.replies["taken.co.uk"] = [REGISTERED]
    settings = load_settings(
        DOMINUS_PROVIDERS="real",
        RDAP_BOOTSTRAP_PATH=str(bootstrap),
        WHOIS_SERVERS_PATH=str(servers),
        RDAP_MAX_ATTEMPTS=1,
    )
    with open_providers(settings) as providers:
        record = providers.rdap.lookup("taken.co.uk")
    assert (record.availability, record.source) == (Availability.REGISTERED, "whois")
    assert fake.hits["taken.co.uk"] == 1

    servers.write_text('{"servers": {"uk": {"host": "not a host"}}}', encoding="utf-8")
    problem = re.escape(f"{servers}: .uk: 'not a host' is not a host name")
    with pytest.raises(ProviderDataError, match=problem), open_providers(settings):
        pass
