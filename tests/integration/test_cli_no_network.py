"""No internet must not look like a result (ADR 0044): a run whose names' availability could
not be checked is degraded, exits 1 and says why. Real providers pointed at loopback DNS and
RDAP servers started here; never the internet."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import Cli
from tests.support.fakes.dns_server import FakeDnsServer
from tests.support.fakes.rdap_server import FakeRdap, bootstrap_doc

NAMES = "zentrova,lumivex,novaquill,brivana,kindrel,orbitly,quenvoy"  # 7 names, all .com
UNAVAILABLE = "could not be checked for 7 of 7 names (no network?)"


@pytest.fixture
def cli(tmp_path: Path, database_url: str) -> Iterator[Cli]:
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    runner = Cli(workdir, database_url)
    yield runner
    runner.kill_leftovers()


@pytest.fixture
def rdap() -> Iterator[FakeRdap]:
    server = FakeRdap()  # 404 for every name: available
    yield server
    server.close()


def real_env(tmp_path: Path, dns: FakeDnsServer, rdap: FakeRdap) -> dict[str, str]:
    bootstrap = tmp_path / "bootstrap.json"
    bootstrap.write_text(json.dumps(bootstrap_doc(rdap.base, ["com"])), encoding="utf-8")
    return {
        "DOMINUS_PROVIDERS": "real",
        "DNS_RESOLVERS": dns.address,
        "DNS_TIMEOUT_MS": "300",
        "RDAP_BOOTSTRAP_PATH": str(bootstrap),
        "RDAP_MAX_ATTEMPTS": "1",
        "COLUMNS": "200",
    }


def test_a_resolver_answering_nxdomain_for_everything_degrades_the_run(
    cli: Cli, tmp_path: Path, rdap: FakeRdap
) -> None:
    dns = FakeDnsServer({}, default="nxdomain", canaries=False)
    try:
        env = real_env(tmp_path, dns, rdap)
        shown = cli.run("run", "-b", NAMES, "--sync", env=env)
        ran = cli.run("run", "-b", NAMES, "--sync", "--json", env=env)
    finally:
        dns.close()
    assert shown.code == 1, str(shown)
    assert f"degraded: dns: availability {UNAVAILABLE}" in shown.stdout
    assert "DNS available 0" in shown.stdout
    assert "nothing to recommend: conservative by design" not in shown.stdout
    assert ran.code == 1, str(ran)
    document: dict[str, Any] = ran.json()
    assert document["degraded"] is True
    assert document["degraded_reasons"] == [f"dns: availability {UNAVAILABLE}"]
    assert document["summary"]["dns"]["available"] == 0
    assert document["summary"]["dns"]["unknown"] == 7
    assert rdap.total_hits() == 0  # no name went on as if it were free
    listed = cli.ok("runs", "show", str(document["run_id"]), "--json").json()
    assert listed["degraded_reasons"] == document["degraded_reasons"]


def test_rdap_failing_for_most_names_degrades_the_run(cli: Cli, tmp_path: Path) -> None:
    dns = FakeDnsServer({}, default="nxdomain")  # answers its canaries: believed
    failing = FakeRdap(default=(503, {}, b"{}", 0.0))
    try:
        ran = cli.run("run", "-b", NAMES, "--sync", "--json", env=real_env(tmp_path, dns, failing))
    finally:
        dns.close()
        failing.close()
    assert ran.code == 1, str(ran)
    document = ran.json()
    assert document["summary"]["dns"]["available"] == 7
    assert document["summary"]["rdap"]["unknown"] == 7
    assert document["degraded_reasons"] == [f"rdap: availability {UNAVAILABLE}"]


def test_a_working_network_is_not_degraded(cli: Cli, tmp_path: Path, rdap: FakeRdap) -> None:
    dns = FakeDnsServer({}, default="nxdomain")
    try:
        ran = cli.run("run", "-b", NAMES, "--sync", "--json", env=real_env(tmp_path, dns, rdap))
    finally:
        dns.close()
    assert ran.code == 0, str(ran)
    document = ran.json()
    assert document["degraded"] is False
    assert document["summary"]["rdap"]["available"] == 7
