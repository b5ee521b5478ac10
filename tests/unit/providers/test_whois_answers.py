"""The WHOIS answer table (free / registered / rate-limited / refused) and the server list."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from dominus.config import load_settings
from dominus.providers.errors import ProviderDataError
from dominus.providers.rdap_bootstrap import RdapBootstrap
from dominus.providers.setup import whois_servers_path
from dominus.providers.whois_answers import AnswerKind, classify, parse_answer_date
from dominus.providers.whois_servers import (
    BUNDLED_WHOIS_SERVERS_PATH,
    WhoisServer,
    WhoisServers,
)

# Terms of use after the answer, as registries print them: words that would mean a refusal or
# a rate limit at the top of an answer mean nothing down here.
BOILERPLATE = (
    "\r\n>>> Last update of WHOIS database: 2026-11-30T00:00:00Z <<<\r\n"
    "\r\nFor more information on Whois status codes, please visit https://icann.org/epp\r\n"
    "This whois service is provided by the registry and only contains information\r\n"
    "TERMS OF USE: You are not authorized to access or query our Whois database through\r\n"
    "high-volume, automated processes. Access to the whois service is rate limited.\r\n"
    "Abuse will result in being permanently blacklisted; when blocked, try again later.\r\n"
)


@pytest.mark.parametrize(
    ("answer", "server"),
    [
        ('No match for "EXAMPLE.COM".\r\n' + BOILERPLATE, ""),  # Verisign
        (
            '\r\n    No match for "example.co.uk".\r\n\r\n'
            "    This domain name has not been registered.",
            "",
        ),
        ("[ JPRS database provides information on network administration. ]\r\nNo match!!\r\n", ""),
        ("Domain: example.de\r\nStatus: free\r\n", ""),  # DENIC
        ("% WHOIS example.eu\r\nDomain: example.eu\r\nStatus: AVAILABLE\r\n", ""),  # EURid
        (
            "%% This is the AFNIC Whois server.\r\n%% No entries found in the AFNIC Database.\r\n",
            "",
        ),
        ("% Copyright (c)2026 by NIC.AT (1)\r\n%\r\n% nothing found\r\n", ""),
        ("NOT FOUND\r\n" + BOILERPLATE, ""),
        ("Domain not found.\r\n" + BOILERPLATE, ""),
        ("The queried object does not exist: DOMAIN NOT FOUND\r\n" + BOILERPLATE, ""),
        ("No Data Found\r\n", ""),
        ('domain "example.se" not found.\r\n', ""),
        ("example.nl is free\r\n", "whois.domain-registry.nl"),
        (
            "No information available about domain name example.pl in the Registry NASK database.",
            "whois.dns.pl",
        ),
    ],
)
def test_no_match_answers_are_available(answer: str, server: str) -> None:
    verdict = classify(answer, server)
    assert verdict.kind is AnswerKind.AVAILABLE
    assert verdict.matched  # the deciding line is kept for the record's detail


@pytest.mark.parametrize(
    ("answer", "server"),
    [
        ("Domain Name: EXAMPLE.COM\r\nRegistrar: X\r\n" + BOILERPLATE, ""),
        ("Domain: example.be\r\nStatus: NOT AVAILABLE\r\nRegistered: Tue Jan 1 2002\r\n", ""),
        ("Domain: example.de\r\nStatus: connect\r\n", ""),
        # A server-specific wording does not decide for other servers.
        ("example.nl is free\r\n", "whois.example.org"),
        # "not found" inside a line (a registrant called "Not Found Ltd") is not a no-match line.
        ("Domain: example.test\r\nRegistrant: The Page Not Found Company\r\n", ""),
    ],
)
def test_anything_else_is_registered(answer: str, server: str) -> None:
    assert classify(answer, server).kind is AnswerKind.REGISTERED


@pytest.mark.parametrize(
    "answer",
    [
        'Error for "x.co.uk".\r\nThe WHOIS query quota for 192.0.2.1 has been exceeded\r\n'
        "and will be replenished in 42 seconds.\r\n",
        "% You have exceeded the query limit for your network.\r\n",
        "Too many queries from your IP, please wait.\r\n",
        "-2: Excessive querying\r\n",
        "Server busy. Try again later.\r\n",
        # Rate limits win over a "no match" in the same answer: never available when blocked.
        "Query rate limit exceeded.\r\nNo match for x.test\r\n",
    ],
)
def test_rate_limit_answers_are_retried(answer: str) -> None:
    assert classify(answer).kind is AnswerKind.RATE_LIMITED


@pytest.mark.parametrize(
    "answer",
    ["%ERROR:201: access denied\r\n", "Your IP has been blocked.\r\n", "You are blacklisted.\r\n"],
)
def test_refusals_are_unknown(answer: str) -> None:
    assert classify(answer).kind is AnswerKind.REFUSED


@pytest.mark.parametrize("answer", ["", "\r\n\r\n", "% only a comment\r\n# and another\r\n"])
def test_empty_answers(answer: str) -> None:
    assert classify(answer).kind is AnswerKind.EMPTY


def test_dates_of_a_registered_answer() -> None:
    answer = (
        "Domain name:\r\n    example.co.uk\r\n\r\n    Relevant dates:\r\n"
        "        Registered on: 22-Jul-2015\r\n        Expiry date:  22-Jul-2027\r\n"
    )
    verdict = classify(answer)
    assert verdict.kind is AnswerKind.REGISTERED
    assert (verdict.registered_at, verdict.expires_at) == (date(2015, 7, 22), date(2027, 7, 22))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2001-02-03T04:05:06Z", date(2001, 2, 3)),
        ("2001.02.03", date(2001, 2, 3)),
        ("2001/02/03 12:00", date(2001, 2, 3)),
        ("03.02.2001", date(2001, 2, 3)),
        ("03-Feb-2001", date(2001, 2, 3)),
        ("3-february-2001", date(2001, 2, 3)),
        ("2001-02-30", None),
        ("31-Foo-2001", None),
        ("before the war", None),
        ("", None),
    ],
)
def test_parse_answer_date(text: str, expected: date | None) -> None:
    assert parse_answer_date(text) == expected


# --- the server list -------------------------------------------------------------------------
def test_server_entries_and_longest_suffix() -> None:
    servers = WhoisServers.parse(
        {
            "servers": {
                "uk": {"host": "whois.nic.uk"},
                "co.uk": "whois.example.net:4343",
                "test": {"host": "127.0.0.1", "port": 4343},
                "v6": {"host": "[::1]:43"},
            }
        }
    )
    assert servers.server_for("a.b.uk") == WhoisServer("whois.nic.uk", 43)
    assert servers.server_for("x.co.uk") == WhoisServer("whois.example.net", 4343)
    assert servers.server_for("x.test") == WhoisServer("127.0.0.1", 4343)
    assert servers.server_for("x.v6") == WhoisServer("::1", 43)
    assert servers.server_for("x.v6").label == "[::1]"  # type: ignore[union-attr]
    assert servers.server_for("x.zz") is None


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ([], 'not a JSON object with a "servers" object'),
        ({"servers": []}, 'not a JSON object with a "servers" object'),
        ({"servers": {"uk": 43}}, '.uk: expected {"host": "whois.example"}'),
        ({"servers": {"uk": {"host": "bad host"}}}, ".uk: 'bad host' is not a host name"),
        ({"servers": {"uk": {"host": "h", "port": 70000}}}, ".uk: port 70000 is not a TCP port"),
        ({"servers": {"u k": "h"}}, "'u k' is not a TLD"),
    ],
)
def test_bad_server_lists_name_the_problem(document: object, problem: str) -> None:
    with pytest.raises(ProviderDataError) as caught:
        WhoisServers.parse(document, "servers.json")
    assert str(caught.value) == f"servers.json: {problem}"


def test_load_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ProviderDataError, match=r"absent\.json: file not found"):
        WhoisServers.load(tmp_path / "absent.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ProviderDataError, match=r"bad\.json: cannot read the WHOIS server list"):
        WhoisServers.load(bad)


def test_bundled_list_covers_only_tlds_without_bundled_rdap() -> None:
    servers = WhoisServers.load()
    assert servers.publication
    assert len(servers.servers) >= 10
    rdap = RdapBootstrap.load()
    assert [tld for tld in servers.servers if rdap.base_urls(tld)] == []


def test_whois_servers_path_setting(tmp_path: Path) -> None:
    assert whois_servers_path(load_settings()) == BUNDLED_WHOIS_SERVERS_PATH
    own = tmp_path / "servers.json"
    assert whois_servers_path(load_settings(WHOIS_SERVERS_PATH=str(own))) == own
