"""Which source confirmed each name (RDAP, WHOIS for TLDs without RDAP, offline sample data) is
kept through the RDAP stage into the stored candidates, the run summary, the candidate documents
and the CLI table. A real run on a real database: RDAP and WHOIS servers on loopback."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from rich.console import Console
from sqlalchemy import Engine, select

from dominus.cli.candidate_tables import recommendations_table
from dominus.jobs.clock import utc_now
from dominus.jobs.documents import dumped
from dominus.pipeline.documents import CandidateOut
from dominus.pipeline.model import RunInput, RunStatus, Stage
from dominus.pipeline.runner import PipelineOptions, PipelineRunner
from dominus.pipeline.store import PipelineStore
from dominus.providers.models import Mark
from dominus.providers.offline import offline_providers
from dominus.providers.rdap import HttpRdapClient, RecordsRdap
from dominus.providers.rdap_bootstrap import RdapBootstrap
from dominus.providers.sets import ProviderSet
from dominus.providers.whois import WhoisClient
from dominus.providers.whois_servers import WhoisServers
from dominus.schema.tables import candidates
from tests.support.fakes.rdap_server import FakeRdap, bootstrap_doc
from tests.support.fakes.whois_server import FakeWhois

pytestmark = pytest.mark.backends("sqlite", "postgresql")


# Offline DNS says nothing about these (so they pass to the RDAP stage); .com has RDAP in the
# test bootstrap, .uk has only WHOIS. The sample keyword data makes "home gym" worth scoring.
RUN_INPUT = RunInput(keywords=["home gym"], brandable=["homegym.uk"])


class NoMarks:
    def marks(self) -> list[Mark]:
        return []  # a trademark source that clears everything


@pytest.fixture
def runs(engine: Engine, backend: str) -> PipelineStore:
    return PipelineStore(engine)


@pytest.fixture
def servers() -> Iterator[tuple[FakeRdap, FakeWhois]]:
    rdap, whois = FakeRdap(), FakeWhois()  # both answer "no such domain" by default
    yield rdap, whois
    rdap.close()
    whois.close()


def run(runs: PipelineStore, providers: ProviderSet, run_input: RunInput) -> int:
    record = runs.create_run(run_input, "sample", utc_now())
    done = PipelineRunner(
        runs, providers, PipelineOptions(), clock=utc_now, stop=threading.Event()
    ).run(record.id)
    assert done.status is RunStatus.COMPLETED and not done.degraded, done
    return record.id


def test_whois_confirmed_names_say_so_everywhere(
    runs: PipelineStore, engine: Engine, servers: tuple[FakeRdap, FakeWhois]
) -> None:
    rdap_server, whois_server = servers
    with httpx.Client() as http:
        rdap = HttpRdapClient(
            RdapBootstrap.parse(bootstrap_doc(rdap_server.base, ["com"])),
            http,
            timeout_seconds=2,
            whois=WhoisClient(
                WhoisServers.parse({"servers": {"uk": whois_server.address}}),
                timeout_seconds=2,
            ),
        )
        providers = dataclasses.replace(offline_providers(), rdap=rdap, trademarks=NoMarks())
        run_id = run(runs, providers, RUN_INPUT)

    assert whois_server.hits["homegym.uk"] == 1
    assert rdap_server.hits["/rdap/domain/homegym.com"] == 1
    checkpoint = runs.checkpoints(run_id)[Stage.RDAP]["results"]
    assert (checkpoint["homegym.uk"]["source"], checkpoint["homegym.com"]["source"]) == (
        "whois",
        "rdap",
    )
    summary = runs.get_run(run_id).summary or {}
    assert summary["availability_sources"] == {"whois": 1, "rdap": 1}

    with engine.connect() as connection:
        query = select(candidates.c.domain, candidates.c.availability_detail)
        details = {domain: detail for domain, detail in connection.execute(query)}
    assert details["homegym.uk"].startswith(f"whois: no match at WHOIS {whois_server.address}")
    assert details["homegym.com"].startswith("rdap: HTTP 404 at 127.0.0.1")

    rows = {row["domain"]: row for row in runs.run_scores(run_id)}
    documents = {domain: dumped(CandidateOut.of(row)) for domain, row in rows.items()}
    assert documents["homegym.uk"]["availability_source"] == "whois"
    assert documents["homegym.com"]["availability_source"] == "rdap"

    console = Console(width=200, record=True)
    table = recommendations_table([documents["homegym.uk"], documents["homegym.com"]], "Scored")
    console.print(table)
    lines = console.export_text().splitlines()
    assert "confirmed by" in lines[2]
    assert next(line for line in lines if "homegym.uk" in line).rstrip(" │").endswith("whois")
    assert next(line for line in lines if "homegym.com" in line).rstrip(" │").endswith("rdap")


def test_offline_runs_say_sample_data(runs: PipelineStore) -> None:
    run_id = run(runs, offline_providers(), RUN_INPUT)
    sources = {row["details"]["availability_source"] for row in runs.run_scores(run_id)}
    assert sources == {"sample"}


def test_a_records_file_says_file(tmp_path: Path) -> None:
    path = tmp_path / "rdap_records.csv"
    path.write_text("domain,status\ntaken.com,registered\n", encoding="utf-8")
    records = RecordsRdap(path)
    assert (records.lookup("taken.com").source, records.lookup("free.com").source) == (
        "file",
        "file",
    )
