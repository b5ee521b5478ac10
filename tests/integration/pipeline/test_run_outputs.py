"""What a run shows, on SQLite and PostgreSQL:
- the final tier comes after the trademark gate: a name it blocks, or cannot verify, is rejected
  with a reason naming the mark, whatever scoring said;
- the candidates are ranked: recommended by expected profit, then speculative, then rejected;
- `--all` lists every candidate, those dropped before scoring with their stage and reason;
- the CSV export has every column of the JSON, and guards against formula injection."""

from __future__ import annotations

import csv
import dataclasses
import io
import threading
from collections.abc import Sequence
from typing import Any

import pytest
from sqlalchemy import Engine

from dominus.jobs.clock import utc_now
from dominus.pipeline.csv_export import CsvExport, cell, flatten
from dominus.pipeline.listing import ListingQuery, candidate_listing, listing_documents
from dominus.pipeline.model import RunInput, RunStatus
from dominus.pipeline.runner import PipelineOptions, PipelineRunner
from dominus.pipeline.store import PipelineStore, RunRecord
from dominus.providers.models import (
    Availability,
    DnsVerdict,
    KeywordStats,
    Mark,
    RdapRecord,
    StopSignal,
)
from dominus.providers.offline import offline_providers
from dominus.providers.sets import ProviderSet

pytestmark = pytest.mark.backends("sqlite", "postgresql")


FORMULA_MARK = '=HYPERLINK("http://evil.example","x")'


class AllAvailable:
    """DNS and RDAP that find every name available."""

    def check(self, domain: str, stop: StopSignal | None = None) -> DnsVerdict:
        return DnsVerdict(domain, Availability.AVAILABLE, "NXDOMAIN")

    def lookup(self, domain: str, stop: StopSignal | None = None) -> RdapRecord:
        return RdapRecord(domain, Availability.AVAILABLE, None, None, "HTTP 404")


class Marks:
    def __init__(self, marks: Sequence[str] | None) -> None:
        self._marks = None if marks is None else [Mark(mark) for mark in marks]

    def marks(self) -> list[Mark] | None:
        return self._marks


class BrokenMarks:
    def marks(self) -> list[Mark] | None:
        raise RuntimeError("the marks database is corrupt")


def providers(marks: Any) -> ProviderSet:
    """Everything available, the sample keyword and sales data plus a keyword for "nike"."""
    offline = offline_providers()
    keywords = offline.keyword_data | {"nike": KeywordStats("nike", 201_000, 2.5)}
    return dataclasses.replace(
        offline, dns=AllAvailable(), rdap=AllAvailable(), trademarks=marks, keyword_data=keywords
    )


@pytest.fixture
def runs(engine: Engine, backend: str) -> PipelineStore:
    return PipelineStore(engine)


def run(
    runs: PipelineStore,
    provider_set: ProviderSet,
    run_input: RunInput,
    options: PipelineOptions | None = None,
) -> RunRecord:
    record = runs.create_run(run_input, "sample", utc_now())
    return PipelineRunner(
        runs, provider_set, options or PipelineOptions(), clock=utc_now, stop=threading.Event()
    ).run(record.id)


def documents_of(runs: PipelineStore, done: RunRecord, **query: Any) -> dict[str, Any]:
    listed = listing_documents(runs, done, ListingQuery(**query))
    return {document["domain"]: document for document in listed}


GATE_INPUT = RunInput(keywords=["nike", "tax software", "home gym"], brandable=["zentrova"])


def test_a_name_the_gate_blocks_is_rejected_naming_the_mark(runs: PipelineStore) -> None:
    done = run(runs, providers(Marks(["NIKE"])), GATE_INPUT)
    documents = documents_of(runs, done)
    nike = documents["nike.com"]
    # Scoring alone would recommend it (a keyword with 201,000 searches): the gate decides.
    assert nike["details"]["scoring_tier"] == "recommended"
    assert (nike["tier"], nike["tier_reason"], nike["stage"]) == (
        "rejected",
        "trademark: blocked by mark NIKE (exact)",
        "trademark",
    )
    assert nike["recommended"] is False
    assert nike["details"]["tier"] == "rejected"
    assert nike["details"]["recommended"] is False
    assert nike["details"]["gates"]["trademark"] is False
    for domain in ("taxsoftware.com", "homegym.com"):
        assert (documents[domain]["tier"], documents[domain]["stage"]) == ("recommended", "score")
        assert documents[domain]["details"]["gates"]["trademark"] is True
    assert documents["zentrova.com"]["tier"] == "speculative"
    summary = done.summary or {}
    assert summary["tiers"] == {"recommended": 2, "speculative": 1, "rejected": 1}
    assert summary["rejected_reasons"] == {"trademark: blocked": 1}
    assert summary["recommended"] == 2
    assert {item["domain"] for item in summary["top"]} == {"taxsoftware.com", "homegym.com"}


def test_without_a_trademark_source_nothing_is_recommended(runs: PipelineStore) -> None:
    done = run(runs, providers(Marks(None)), GATE_INPUT)
    documents = documents_of(runs, done)
    assert {document["tier"] for document in documents.values()} == {"rejected"}
    for document in documents.values():
        assert document["tier_reason"].startswith("trademark: not verified, no trademark source")
        assert document["stage"] == "trademark"
    assert documents["taxsoftware.com"]["tier_reason"] == (
        "trademark: not verified, no trademark source"
    )
    # zentrova.com was speculative: the gate's reason, then the engine's.
    assert documents["zentrova.com"]["tier_reason"].startswith(
        "trademark: not verified, no trademark source; only the intrinsic signal"
    )
    assert (done.summary or {})["tiers"] == {"recommended": 0, "speculative": 0, "rejected": 4}


def test_a_trademark_stage_that_fails_leaves_names_rejected_as_not_checked(
    runs: PipelineStore,
) -> None:
    done = run(runs, providers(BrokenMarks()), GATE_INPUT)
    assert done.degraded
    documents = documents_of(runs, done)
    assert documents["taxsoftware.com"]["tier"] == "rejected"
    assert documents["taxsoftware.com"]["tier_reason"] == ("trademark: not checked (stage failed)")
    assert (done.summary or {})["rejected_reasons"] == {"trademark: not checked": 4}


RANKED_INPUT = RunInput(
    keywords=["tax software", "home gym", "tiny homes", "password manager", "standing desk"],
    brandable=["zentrova", "kindrel.ai", "nikeshoes"],
    closeout=[
        {"domain": "oldgardentools.com", "age": 17.5, "backlinks": 340, "price": 1850},
        {"domain": "insurance.com", "age": 30, "backlinks": 9000},
    ],
)
TIER_RANK = {"recommended": 0, "speculative": 1, "rejected": 2}


def test_candidates_are_ranked_by_tier_then_expected_profit(runs: PipelineStore) -> None:
    done = run(runs, providers(Marks(["nike"])), RANKED_INPUT)
    listed = listing_documents(runs, done, ListingQuery())
    assert len(listed) == 10
    tiers = [document["tier"] for document in listed]
    assert tiers == sorted(tiers, key=TIER_RANK.__getitem__)
    assert tiers.count("recommended") >= 3
    for tier in TIER_RANK:
        profits = [d["expected_profit"] for d in listed if d["tier"] == tier]
        known = [profit for profit in profits if profit is not None]
        assert known == sorted(known, reverse=True), (tier, profits)
        assert profits[: len(known)] == known  # an unknown profit comes last
    for document in listed:
        if document["tier"] == "recommended":
            assert document["evidence"], document["domain"]  # every one shows its evidence
            assert document["expected_profit"] > 0
        if document["tier"] == "speculative":
            assert document["evidence"] is None
    assert listed[-1]["domain"] == "insurance.com"  # no listed price: no profit to rank by
    recommended = [d["domain"] for d in listed if d["tier"] == "recommended"]
    assert [item["domain"] for item in (done.summary or {})["top"]] == recommended
    assert all(item["evidence"] for item in (done.summary or {})["top"])
    only = listing_documents(runs, done, ListingQuery(recommended_only=True))
    assert [document["domain"] for document in only] == recommended


SAMPLE_INPUT = RunInput(
    keywords=["solar panels", "hiking boots", "home gym", "bad..one"],
    brandable=["zentrova", "nikeshoes", "-x"],
    closeout=[{"domain": "oldgardentools.com", "age": 17.5, "price": 1850}],
)


def test_all_lists_every_candidate_with_its_stage_and_reason(runs: PipelineStore) -> None:
    done = run(runs, offline_providers(), SAMPLE_INPUT)
    everything = listing_documents(runs, done, ListingQuery(include_dropped=True))
    summary = done.summary or {}
    assert len(everything) == summary["candidates"] + summary["invalid"] == 8
    scored = [document for document in everything if "tier" in document]
    dropped = everything[len(scored) :]
    assert len(scored) == summary["scored"]
    assert all("dropped_reason" in document for document in dropped)  # scored ones first
    by_name = {document["domain"] or document["input"]: document for document in dropped}
    assert by_name["solarpanels.com"]["stage"] == "dns"
    assert by_name["solarpanels.com"]["dropped_reason"] == ("registered (listed in registered.txt)")
    assert by_name["hikingboots.com"]["stage"] == "rdap"
    assert by_name["hikingboots.com"]["dropped_reason"] == (
        "registered (sample: listed in rdap_records.csv)"
    )
    assert by_name["bad..one"]["stage"] == "generate"
    assert by_name["bad..one"]["dropped_reason"].startswith("invalid input: ")
    assert by_name["bad..one"]["domain"] is None
    assert by_name["-x"]["source"] == "brandable"
    blocked = next(d for d in scored if d["domain"] == "nikeshoes.com")
    assert (blocked["stage"], blocked["tier"]) == ("trademark", "rejected")
    assert blocked["tier_reason"].startswith("trademark: blocked by mark nike (substring); ")
    # Without --all: only the scored ones; with --recommended, --all adds nothing.
    assert listing_documents(runs, done, ListingQuery()) == scored
    recommended = listing_documents(runs, done, ListingQuery(recommended_only=True))
    assert listing_documents(
        runs, done, ListingQuery(recommended_only=True, include_dropped=True)
    ) == list(recommended)


@pytest.mark.parametrize(
    "window",
    [
        {"top": 1},
        {"top": 3},
        {"top": 100},
        {"limit": 2},
        {"offset": 2, "limit": 3},
        {"offset": 4},
        {"offset": 6, "limit": 1},
        {"offset": 20},
        {"top": 5, "offset": 3, "limit": 10},
        {"top": 2, "offset": 3},
    ],
)
def test_top_limit_and_offset_cut_the_ranking(runs: PipelineStore, window: dict[str, Any]) -> None:
    done = run(runs, offline_providers(), SAMPLE_INPUT)
    full = listing_documents(runs, done, ListingQuery(include_dropped=True))
    top = window.get("top")
    start = window.get("offset", 0)
    ranked = full[:top] if top is not None else full
    limit = window.get("limit")
    expected = ranked[start : start + limit if limit is not None else None]
    listed = listing_documents(runs, done, ListingQuery(include_dropped=True, **window))
    assert listed == expected


def test_a_run_over_budget_says_which_names_were_not_checked(runs: PipelineStore) -> None:
    """No time at all: DNS checks nothing, scoring scores nothing. The registrations were not
    checked by DNS, the listing was not scored; each says so."""
    options = PipelineOptions(budget_base_seconds=0, budget_per_candidate_seconds=0)
    run_input = RunInput(
        keywords=["home gym", "tax software"], closeout=[{"domain": "oldgardentools.com"}]
    )
    done = run(runs, offline_providers(), run_input, options)
    assert done.status is RunStatus.COMPLETED and done.degraded
    everything = listing_documents(runs, done, ListingQuery(include_dropped=True))
    unscored = {d["domain"]: d for d in everything if "dropped_reason" in d}
    assert set(unscored) == {"homegym.com", "taxsoftware.com", "oldgardentools.com"}
    for domain in ("homegym.com", "taxsoftware.com"):
        assert unscored[domain]["stage"] == "dns"
        assert unscored[domain]["dropped_reason"] == "not checked (stage over budget)"
    assert unscored["oldgardentools.com"]["stage"] == "score"
    assert unscored["oldgardentools.com"]["dropped_reason"] == "not checked (stage over budget)"
    assert unscored["oldgardentools.com"]["acquisition"] == "purchase"


def parse_csv(text: str) -> list[dict[str, str]]:
    assert text.startswith("\ufeff")
    return list(csv.DictReader(io.StringIO(text.removeprefix("\ufeff"), newline="")))


def test_the_csv_export_has_every_column_and_guards_a_formula_in_a_mark(
    runs: PipelineStore,
) -> None:
    """No domain can start with `=`: a mark can. The name below is blocked by it (exactly),
    so the mark shows in the candidate's `trademark.mark` and in its reason."""
    marks = Marks([FORMULA_MARK, "nike"])
    run_input = RunInput(
        keywords=["home gym", "bad..one"],
        brandable=["hyperlinkhttpevilexamplex", "zentrova", "nikeshoes"],
        closeout=[{"domain": "oldgardentools.com", "age": 17.5, "price": 1850}],
    )
    done = run(runs, providers(marks), run_input)
    query = ListingQuery(include_dropped=True)
    documents = listing_documents(runs, done, query)
    export = CsvExport(lambda: candidate_listing(runs, done, query))
    text = "".join(export.chunks())
    assert export.rows == len(documents) == 6
    assert text.count("\r\n") == len(documents) + 1  # no line ends inside a field here
    rows = parse_csv(text)
    assert len(rows) == len(documents)
    for row, document in zip(rows, documents, strict=True):
        flat = flatten(document)
        for column, value in row.items():
            parent = next((p for p in flat if column.startswith(f"{p}.")), None)
            expected = "" if parent is not None else cell(flat.get(column))
            assert value == expected, (document.get("domain"), column)
        assert set(flat) - set(row) <= {p for p in flat if flat[p] is None}
    blocked = next(row for row in rows if row["domain"] == "hyperlinkhttpevilexamplex.com")
    assert blocked["trademark.mark"] == f"'{FORMULA_MARK}"
    assert blocked["details.trademark.mark"] == f"'{FORMULA_MARK}"
    assert (
        blocked["tier_reason"]
        == f"trademark: blocked by mark {FORMULA_MARK} (exact); "
        + (blocked["details.scoring_tier_reason"])
    )
    assert '"\'=HYPERLINK(""http://evil.example"",""x"")"' in text  # quotes doubled
    # A negative figure stays a number a spreadsheet can sum: the guard is for text.
    losing = next(row for row in rows if row["domain"] == "oldgardentools.com")
    assert float(losing["expected_profit"]) < 0
    assert losing["expected_profit"].startswith("-")
    # No cell anywhere starts a formula: what starts with `-` is a plain number.
    for row in rows:
        assert not any(value.startswith(("=", "+", "@")) for value in row.values())
        assert all(is_number(value) for value in row.values() if value.startswith("-"))


def is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
