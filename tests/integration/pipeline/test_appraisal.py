"""A single-domain appraisal scores a name exactly as a pipeline run does (ADR 0018): the same
candidate from stage 1, the same ScoringInput (`scoring_input`, shared with the score stage), the
active weight set read the same way, the same trademark verdict. Checked against real in-process
runs on both backends, name by name, for every name of the sample input."""

from __future__ import annotations

import dataclasses
import json
import threading
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine

from dominus.pipeline.appraisal import (
    AppraisalRequest,
    Appraiser,
    active_weights,
    validate_requests,
)
from dominus.pipeline.model import RunInput, RunStatus
from dominus.pipeline.runner import PipelineOptions, PipelineRunner
from dominus.pipeline.scoring_sets import weight_sets_of
from dominus.pipeline.stage_results import Candidate, RunState
from dominus.pipeline.store import PipelineStore
from dominus.providers.models import Availability, DnsVerdict, RdapRecord, StopSignal
from dominus.providers.offline import SAMPLE_INPUT_PATH, offline_providers
from dominus.providers.sets import ProviderSet
from dominus.scoring import Tier

pytestmark = pytest.mark.backends("sqlite", "postgresql")


NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
TUNED = {"intrinsic": 0.4, "commercial": 0.3, "market": 0.2, "expiry": 0.1}


class EverythingAvailable:
    """DNS and RDAP that let every registration through, so every sample name is scored."""

    def check(self, domain: str, stop: StopSignal | None = None) -> DnsVerdict:
        return DnsVerdict(domain, Availability.AVAILABLE, "NXDOMAIN")

    def lookup(self, domain: str, stop: StopSignal | None = None) -> RdapRecord:
        return RdapRecord(domain, Availability.AVAILABLE, detail="HTTP 404")


@pytest.fixture
def runs(engine: Engine, backend: str) -> PipelineStore:
    return PipelineStore(engine)


def sample_input() -> RunInput:
    return RunInput.model_validate(json.loads(SAMPLE_INPUT_PATH.read_text(encoding="utf-8")))


def run_state(runs: PipelineStore, providers: ProviderSet, options: PipelineOptions) -> RunState:
    return RunState.from_checkpoints(runs.checkpoints(finished_run(runs, providers, options)))


def finished_run(runs: PipelineStore, providers: ProviderSet, options: PipelineOptions) -> int:
    record = runs.create_run(sample_input(), "sample", NOW)
    done = PipelineRunner(runs, providers, options, clock=lambda: NOW, stop=threading.Event()).run(
        record.id
    )
    assert done.status is RunStatus.COMPLETED and not done.degraded
    return done.id


def request_for(candidate: Candidate) -> AppraisalRequest:
    """What a person would type to appraise this candidate: the name, and a listing's facts."""
    if not candidate.purchase:
        return AppraisalRequest(candidate.unicode)
    facts = candidate.expiry
    assert facts is not None
    return AppraisalRequest(
        candidate.unicode,
        price=candidate.price,
        age=facts.age_years,
        backlinks=facts.backlinks,
        wayback=facts.wayback_snapshots,
    )


@pytest.mark.parametrize("availability", ["sample", "everything available"])
def test_an_appraisal_scores_each_name_exactly_as_the_score_stage(
    runs: PipelineStore, availability: str
) -> None:
    providers = offline_providers()
    if availability == "everything available":
        registry = EverythingAvailable()
        providers = dataclasses.replace(providers, dns=registry, rdap=registry)
    weight_sets_of(runs.engine).add("tuned", TUNED, "test", NOW)  # activated: both must read it
    options = PipelineOptions()
    run_id = finished_run(runs, providers, options)
    state = RunState.from_checkpoints(runs.checkpoints(run_id))
    scored = state.score.scores
    assert len(scored) >= 10
    rows = {row["domain"]: row for row in runs.run_scores(run_id)}

    appraiser = Appraiser(providers, options, active_weights(runs), NOW.date())
    assert appraiser.weights.weights.to_dict() == TUNED
    candidates = {candidate.domain: candidate for candidate in state.generate.candidates}
    tiers = set()
    for domain, document in scored.items():
        (name,) = validate_requests([request_for(candidates[domain])])
        appraisal = appraiser.appraise(name)
        assert appraisal.score.to_dict() == document, domain
        assert appraisal.candidate.acquisition == candidates[domain].acquisition
        assert appraisal.candidate.price == candidates[domain].price
        assert appraisal.candidate.expiry == candidates[domain].expiry
        verdict = state.trademark.verdict(domain)
        assert appraisal.trademark.result.verdict is verdict.verdict, domain
        assert appraisal.trademark.result.matched_mark == verdict.mark, domain
        assert (appraisal.tier is Tier.RECOMMENDED) == rows[domain]["recommended"], domain
        tiers.add(appraisal.tier)
    if availability == "everything available":
        assert tiers == set(Tier)  # the comparison covered all three tiers


def test_a_keyword_name_is_looked_up_by_its_phrase_as_dominus_run_k_would(
    runs: PipelineStore,
) -> None:
    providers = offline_providers()
    registry = EverythingAvailable()
    providers = dataclasses.replace(providers, dns=registry, rdap=registry)
    state = run_state(runs, providers, PipelineOptions())
    keyword_candidates = [c for c in state.generate.candidates if c.keyword]
    appraiser = Appraiser(providers, PipelineOptions(), active_weights(runs), NOW.date())
    checked = 0
    for candidate in keyword_candidates:
        if candidate.keyword not in providers.keyword_data:
            continue
        (name,) = validate_requests([AppraisalRequest(candidate.domain)])
        assert appraiser.candidate(name) == candidate
        checked += 1
    assert checked >= 5
