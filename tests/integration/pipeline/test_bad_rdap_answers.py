"""One name's bad RDAP answer costs that name only: the rest of the run's names are confirmed
and the RDAP stage completes. A real run on a real database, RDAP on loopback."""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from dominus.jobs.clock import utc_now
from dominus.pipeline.model import RunInput, RunStatus, Stage
from dominus.pipeline.runner import PipelineOptions, PipelineRunner
from dominus.pipeline.store import PipelineStore
from dominus.providers.models import Mark, RdapRecord, StopSignal
from dominus.providers.offline import offline_providers
from dominus.providers.rdap import HttpRdapClient
from dominus.providers.rdap_bootstrap import RdapBootstrap
from dominus.providers.sets import ProviderSet
from tests.support.fakes.rdap_server import FakeRdap, bootstrap_doc

pytestmark = pytest.mark.backends("sqlite", "postgresql")


# Names the offline DNS data does not list, so all of them reach the RDAP stage.
NAMES = ["qzvfree.com", "qzvtaken.com", "qzvdeep.com", "qzvfar.com"]
TAKEN = json.dumps({"objectClassName": "domain", "ldhName": "QZVTAKEN.COM"}).encode()
FAR_FUTURE = json.dumps(
    {
        "objectClassName": "domain",
        "events": [{"eventAction": "expiration", "eventDate": "9999-12-31T23:59:59-23:59"}],
    }
).encode()


class NoMarks:
    def marks(self) -> list[Mark]:
        return []


class BreaksOn:
    """An RDAP client whose lookup of one name raises what no one expected."""

    def __init__(self, inner: Any, domain: str) -> None:
        self.inner = inner
        self.domain = domain

    def lookup(self, domain: str, stop: StopSignal | None = None) -> RdapRecord:
        if domain == self.domain:
            raise KeyError("events")
        record: RdapRecord = self.inner.lookup(domain, stop)
        return record


@pytest.fixture
def runs(engine: Any, backend: str) -> PipelineStore:
    return PipelineStore(engine)


@pytest.fixture
def rdap() -> Iterator[HttpRdapClient]:
    server = FakeRdap()  # 404 (available) unless routed
    server.routes["/rdap/domain/qzvtaken.com"] = [(200, {}, TAKEN, 0.0)]
    server.routes["/rdap/domain/qzvdeep.com"] = [(200, {}, b"[" * 200_000, 0.0)]
    server.routes["/rdap/domain/qzvfar.com"] = [(200, {}, FAR_FUTURE, 0.0)]
    with httpx.Client() as http:
        yield HttpRdapClient(
            RdapBootstrap.parse(bootstrap_doc(server.base, ["com"])), http, timeout_seconds=5
        )
    server.close()


def rdap_results(runs: PipelineStore, providers: ProviderSet) -> dict[str, dict[str, Any]]:
    record = runs.create_run(RunInput(brandable=NAMES), "sample", utc_now())
    done = PipelineRunner(
        runs, providers, PipelineOptions(), clock=utc_now, stop=threading.Event()
    ).run(record.id)
    assert done.status is RunStatus.COMPLETED, done
    assert done.stages["rdap"]["status"] == "completed", done.degraded_reasons
    results: dict[str, dict[str, Any]] = runs.checkpoints(record.id)[Stage.RDAP]["results"]
    return results


def test_malformed_answers_cost_their_own_names_only(
    runs: PipelineStore, rdap: HttpRdapClient
) -> None:
    providers = dataclasses.replace(offline_providers(), rdap=rdap, trademarks=NoMarks())
    results = rdap_results(runs, providers)
    verdicts = {name: results[name]["availability"] for name in NAMES}
    assert verdicts == {
        "qzvfree.com": "available",
        "qzvtaken.com": "registered",
        "qzvdeep.com": "unknown",  # JSON nested past the parser
        "qzvfar.com": "registered",  # its expiry date is out of range: no date
    }
    assert results["qzvdeep.com"]["detail"].endswith("but not RDAP JSON")
    assert results["qzvfar.com"]["expires_at"] is None


def test_a_lookup_that_raises_costs_its_own_name_only(
    runs: PipelineStore, rdap: HttpRdapClient, caplog: pytest.LogCaptureFixture
) -> None:
    broken = BreaksOn(rdap, "qzvfree.com")
    providers = dataclasses.replace(offline_providers(), rdap=broken, trademarks=NoMarks())
    with caplog.at_level(logging.WARNING, logger="dominus.pipeline"):
        results = rdap_results(runs, providers)
    assert results["qzvfree.com"]["availability"] == "unknown"
    assert results["qzvfree.com"]["detail"] == "lookup failed: KeyError: 'events'"
    assert results["qzvtaken.com"]["availability"] == "registered"
    [warning] = [r.getMessage() for r in caplog.records if "lookup of" in r.getMessage()]
    assert warning == "RDAP lookup of qzvfree.com failed: KeyError: 'events'"
