"""Closeout and auction names are bought, not registered: the availability
stages never drop them; they reach scoring as purchases with their listed price, and every
output says so. Hand-registrations keep the availability check."""

from __future__ import annotations

import dataclasses
import threading
from datetime import date
from typing import Any

import pytest
from sqlalchemy import Engine, select

from dominus.jobs.backoff import Backoff
from dominus.jobs.clock import utc_now
from dominus.jobs.documents import dumped
from dominus.pipeline import runner as runner_module
from dominus.pipeline import stages as stages_module
from dominus.pipeline.documents import CandidateOut
from dominus.pipeline.model import RunInput, RunStatus
from dominus.pipeline.runner import PipelineOptions, PipelineRunner
from dominus.pipeline.store import PipelineStore, RunRecord
from dominus.providers.models import Availability, DnsVerdict, RdapRecord, StopSignal
from dominus.providers.offline import offline_providers
from dominus.providers.sets import ProviderSet
from dominus.schema.tables import candidates
from dominus.scoring import ScoringInput

pytestmark = pytest.mark.backends("sqlite", "postgresql")


INPUT = RunInput(
    keywords=["home gym"],
    brandable=["zentrova"],
    closeout=[
        {"domain": "oldgardentools.com", "age": 17.5, "backlinks": 340, "price": 1850},
        {"domain": "quietkitchen.net", "age": 4.0},  # listed without a price
    ],
)
CLOSEOUTS = {"oldgardentools.com", "quietkitchen.net"}


class EverythingRegistered:
    """DNS and RDAP that find every name registered (parked), recording what they were asked."""

    def __init__(self) -> None:
        self.dns_asked: list[str] = []
        self.rdap_asked: list[str] = []
        self.lock = threading.Lock()

    def check(self, domain: str, stop: StopSignal | None = None) -> DnsVerdict:
        with self.lock:
            self.dns_asked.append(domain)
        return DnsVerdict(domain, Availability.REGISTERED, "NS present (parked)")

    def lookup(self, domain: str, stop: StopSignal | None = None) -> RdapRecord:
        with self.lock:
            self.rdap_asked.append(domain)
        return RdapRecord(
            domain, Availability.REGISTERED, date(2008, 4, 30), date(2027, 4, 30), "HTTP 200"
        )


class RdapDown:
    def lookup(self, domain: str, stop: StopSignal | None = None) -> RdapRecord:
        raise ConnectionError("registry unreachable")


@pytest.fixture
def runs(engine: Engine, backend: str) -> PipelineStore:
    return PipelineStore(engine)


@pytest.fixture
def scored_inputs(monkeypatch: pytest.MonkeyPatch) -> dict[str, ScoringInput]:
    """What the score stage handed the scoring engine, by domain."""
    seen: dict[str, ScoringInput] = {}
    real = stages_module.score_one  # type: ignore[attr-defined]

    def recording(inputs: ScoringInput, *args: Any) -> Any:
        seen[inputs.domain] = inputs
        return real(inputs, *args)

    monkeypatch.setattr(stages_module, "score_one", recording)
    return seen


def run(runs: PipelineStore, providers: ProviderSet, run_input: RunInput = INPUT) -> RunRecord:
    record = runs.create_run(run_input, "sample", utc_now())
    return PipelineRunner(
        runs, providers, PipelineOptions(), clock=utc_now, stop=threading.Event()
    ).run(record.id)


def test_registered_closeout_names_are_scored_as_purchases_with_their_price(
    runs: PipelineStore, engine: Engine, scored_inputs: dict[str, ScoringInput]
) -> None:
    registry = EverythingRegistered()
    providers = dataclasses.replace(offline_providers(), dns=registry, rdap=registry)
    done = run(runs, providers)
    assert done.status is RunStatus.COMPLETED and not done.degraded

    # The hand-registrations are registered: dropped by DNS. The listings go on.
    documents = {row["domain"]: dumped(CandidateOut.of(row)) for row in runs.run_scores(done.id)}
    assert set(documents) == CLOSEOUTS
    assert documents["oldgardentools.com"]["acquisition"] == "purchase"
    assert documents["oldgardentools.com"]["listed_price"] == 1850
    assert documents["quietkitchen.net"]["acquisition"] == "purchase"
    assert documents["quietkitchen.net"]["listed_price"] is None

    # Scoring was told: a purchase, at the listed price.
    assert scored_inputs["oldgardentools.com"].purchase is True
    assert scored_inputs["oldgardentools.com"].acquisition_price == 1850
    assert scored_inputs["quietkitchen.net"].purchase is True
    assert scored_inputs["quietkitchen.net"].acquisition_price is None

    # DNS is not asked about listings (it can only say "registered"); RDAP is, for the dates.
    assert sorted(registry.dns_asked) == ["homegym.com", "zentrova.com"]
    assert sorted(registry.rdap_asked) == sorted(CLOSEOUTS)
    with engine.connect() as connection:
        rows = connection.execute(
            select(candidates.c.domain, candidates.c.availability, candidates.c.expires_at).where(
                candidates.c.domain == "oldgardentools.com"
            )
        ).all()
    assert [tuple(row) for row in rows] == [("oldgardentools.com", "registered", date(2027, 4, 30))]

    summary = done.summary or {}
    assert summary["purchase_candidates"] == 2
    assert summary["dns"] == {"available": 0, "registered": 2, "unknown": 0, "unchecked": 0}
    assert summary["rdap"] == {"available": 0, "registered": 0, "unknown": 0, "unchecked": 0}
    assert summary["purchase_rdap"] == {
        "available": 0,
        "registered": 2,
        "unknown": 0,
        "unchecked": 0,
    }
    assert summary["scored"] == 2
    for top in summary["top"]:
        assert top["acquisition"] == "purchase"


def test_a_registered_keyword_name_is_still_dropped(
    runs: PipelineStore, scored_inputs: dict[str, ScoringInput]
) -> None:
    """hikingboots.com: DNS misses it, RDAP finds it registered (sample data). As a keyword
    it is a hand-registration and is dropped; oldgardentools.com, registered by the same RDAP
    data, is a listing and is scored."""
    run_input = RunInput(
        keywords=["hiking boots", "solar panels", "home gym"],
        closeout=[{"domain": "oldgardentools.com", "price": 1850.5}],
    )
    done = run(runs, offline_providers(), run_input)
    documents = {row["domain"]: dumped(CandidateOut.of(row)) for row in runs.run_scores(done.id)}
    assert set(documents) == {"homegym.com", "oldgardentools.com"}
    assert documents["homegym.com"]["acquisition"] == "registration"
    assert documents["homegym.com"]["listed_price"] is None
    assert scored_inputs["homegym.com"].purchase is False
    assert scored_inputs["homegym.com"].acquisition_price is None
    assert documents["oldgardentools.com"]["listed_price"] == 1850.5


def test_listings_go_on_when_rdap_cannot_answer(
    runs: PipelineStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RDAP down: the hand-registrations it could not confirm are dropped (conservative), the
    listings are scored all the same (RDAP's verdict decides nothing for them)."""
    monkeypatch.setattr(runner_module, "STAGE_RETRY_BACKOFF", Backoff(0.01, max_seconds=0.01))
    providers = dataclasses.replace(offline_providers(), rdap=RdapDown())
    done = run(runs, providers)
    assert done.degraded
    assert done.degraded_reasons[0].startswith("rdap: still failing")
    scored = {row["domain"] for row in runs.run_scores(done.id)}
    assert scored == CLOSEOUTS
