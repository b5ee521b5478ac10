"""The per-server rate table (bundled CSV) and PROVIDER_RATE_LIMITS."""

from __future__ import annotations

from pathlib import Path

import pytest

from dominus.config import load_settings
from dominus.errors import ConfigurationError
from dominus.providers.errors import ProviderDataError
from dominus.providers.rate_limits import (
    RateLimits,
    Window,
    describe,
    parse_period,
    parse_rate,
    parse_rate_limits,
    read_table,
)
from dominus.providers.whois_servers import WhoisServers

HEADER = "protocol,server,limit,period,as_of,note\n"
FALLBACKS = "rdap,*,2,1s,2026-12-05,guess\nwhois,*,1,1s,2026-12-05,guess\n"


@pytest.mark.parametrize(
    ("text", "window"),
    [
        ("10/s", Window(10, 1)),
        ("30/min", Window(30, 60)),
        ("1/h", Window(1, 3600)),
        ("15/60s", Window(15, 60)),
        ("1000/24h", Window(1000, 86400)),
        (" 2/5min ", Window(2, 300)),
    ],
)
def test_rates(text: str, window: Window) -> None:
    assert parse_rate(text) == window


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0/s", "at least 1"),
        ("-3/s", "at least 1"),
        ("1/0s", "is not N/s"),
        ("1/d", "is not N/s"),
        ("1.5/s", "is not N/s"),
        ("ten/s", "is not N/s"),
        ("10", "is not N/s"),
    ],
)
def test_bad_rates_are_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_rate(text)


def test_periods() -> None:
    assert [parse_period(text) for text in ("s", "3s", "min", "2min", "h", "24h")] == [
        1,
        3,
        60,
        120,
        3600,
        86400,
    ]


def test_the_setting_names_hosts_and_may_repeat_one() -> None:
    limits = parse_rate_limits(
        "RDAP.Verisign.com=10/s, whois.nic.uk=1/s,whois.nic.uk=100/h,*=1/min,"
    )
    assert limits == {
        "rdap.verisign.com": (Window(10, 1),),
        "whois.nic.uk": (Window(1, 1), Window(100, 3600)),
        "*": (Window(1, 60),),
    }
    assert parse_rate_limits("") == {}
    assert parse_rate_limits("127.0.0.1:4343=5/s,[::1]=1/s") == {
        "127.0.0.1:4343": (Window(5, 1),),
        "[::1]": (Window(1, 1),),
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rdap.verisign.com", "is not host=N/period"),
        ("rdap.verisign.com:10/s", "is not host=N/period"),
        ("=10/s", "is not a host name"),
        ("bad host=1/s", "is not a host name"),
        ("rdap.verisign.com=0/s", "at least 1"),
        ("rdap.verisign.com=-1/s", "at least 1"),
        ("rdap.verisign.com=10/day", "is not N/s"),
    ],
)
def test_bad_settings_are_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_rate_limits(text)


def test_a_bad_setting_stops_start_up_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROVIDER_RATE_LIMITS", "rdap.verisign.com=0/s")
    with pytest.raises(ConfigurationError) as raised:
        load_settings()
    message = str(raised.value)
    assert message.startswith("invalid settings: PROVIDER_RATE_LIMITS='rdap.verisign.com=0/s'")
    assert "at least 1" in message
    assert "\n" not in message
    monkeypatch.setenv("PROVIDER_RATE_LIMITS", "rdap.verisign.com=10/s")
    assert load_settings().PROVIDER_RATE_LIMITS == "rdap.verisign.com=10/s"


def test_the_bundled_table_holds_every_known_server() -> None:
    """Verisign's RDAP and every WHOIS server of the bundled list have their own rows, each a
    limit from 1, dated, with a note saying where it comes from (or that it is a guess)."""
    limits = RateLimits.load()
    servers = {server.host for server in WhoisServers.load().servers.values()}
    for host in servers:
        assert ("whois", host) in limits.table, host
    assert ("rdap", "rdap.verisign.com") in limits.table
    assert limits.windows_for("whois:whois.nic.uk") == (Window(5, 1), Window(1000, 86400))
    assert limits.windows_for("whois:whois.eu") == (Window(15, 60),)
    assert limits.windows_for("rdap:rdap.unknown.example") == limits.table[("rdap", "*")]
    assert limits.windows_for("whois:whois.unknown.example") == limits.table[("whois", "*")]


def test_lookup_order(tmp_path: Path) -> None:
    path = tmp_path / "limits.csv"
    path.write_text(HEADER + FALLBACKS + "rdap,rdap.example,7,1s,2026-12-05,x\n", "utf-8")
    table = read_table(path)
    plain = RateLimits(table)
    assert plain.windows_for("rdap:rdap.example") == (Window(7, 1),)
    assert plain.windows_for("rdap:rdap.example:8443") == (Window(7, 1),)  # any port
    assert plain.windows_for("whois:rdap.example") == (Window(1, 1),)  # another protocol's row
    over = RateLimits(table, parse_rate_limits("rdap.example:8443=3/s,*=9/min"))
    assert over.windows_for("rdap:rdap.example:8443") == (Window(3, 1),)
    assert over.windows_for("rdap:rdap.example") == (Window(7, 1),)  # the table's row stands
    assert over.windows_for("rdap:other.example") == (Window(9, 60),)
    assert RateLimits.none().windows_for("rdap:rdap.example") == ()
    assert describe(over.windows_for("rdap:rdap.example:8443")) == "3/1s"


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("ftp,x.example,1,1s,2026-12-05,n\n", "line 4: protocol 'ftp'"),
        ("rdap,x.example,0,1s,2026-12-05,n\n", "line 4: rate '0/1s'"),
        ("rdap,x.example,1,1w,2026-12-05,n\n", "line 4: rate '1/1w'"),
        ("rdap,x.example,1,1s,someday,n\n", "line 4: as_of 'someday' is not a date"),
        ("rdap,not a host,1,1s,2026-12-05,n\n", "line 4: 'not a host'"),
    ],
)
def test_a_bad_table_row_is_named(tmp_path: Path, rows: str, message: str) -> None:
    path = tmp_path / "limits.csv"
    path.write_text(HEADER + FALLBACKS + rows, "utf-8")
    with pytest.raises(ProviderDataError, match=message):
        read_table(path)


def test_a_table_without_a_fallback_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "limits.csv"
    path.write_text(HEADER + "rdap,*,2,1s,2026-12-05,guess\n", "utf-8")
    with pytest.raises(ProviderDataError, match="no '\\*' row for whois"):
        read_table(path)
