"""Typed stage results read the checkpoints the dict-based code wrote (fixtures captured from
real runs of that code), and write them back with the same keys."""

from __future__ import annotations

import copy
import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from dominus.pipeline.model import Stage
from dominus.pipeline.stage_results import (
    UNVERIFIED,
    Candidate,
    CandidateSource,
    DnsAnswer,
    DnsResult,
    GenerateResult,
    InvalidInput,
    RdapAnswer,
    RunState,
    ScoreResult,
    TrademarkEntry,
    TrademarkResult,
    result_from_json,
)
from dominus.pipeline.trademark_gate import TrademarkVerdict
from dominus.providers.models import Availability, ExpiryFacts

FIXTURES = Path(__file__).parents[2] / "fixtures" / "checkpoints_before_0016"
FIXTURE_NAMES = sorted(path.stem for path in FIXTURES.glob("*.json"))


def old_checkpoints(name: str) -> dict[Stage, dict[str, Any]]:
    data = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return {Stage(stage): checkpoint for stage, checkpoint in data.items()}


def test_every_fixture_is_there() -> None:
    assert FIXTURE_NAMES == [
        "complete_run",
        "dns_failing",
        "dns_over_budget",
        "no_trademark_source",
        "score_setup_failing",
        "trademark_failing",
    ]


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_old_checkpoints_read_and_write_back_unchanged(name: str) -> None:
    """Two differences only: each RDAP answer says which source gave it (`rdap` for every old
    answer, as only RDAP existed), and a score stage that failed before scoring writes its
    empty `scores` (the old `{}` meant the same to every reader)."""
    for stage, data in old_checkpoints(name).items():
        expected = copy.deepcopy(data)
        if stage is Stage.RDAP:
            for answer in expected["results"].values():
                answer["source"] = "rdap"
        if stage is Stage.SCORE:
            expected.setdefault("scores", {})
        result = result_from_json(stage, data)
        assert result.to_json() == expected, stage
        assert result_from_json(stage, result.to_json()) == result, stage


def test_a_complete_run_reads_as_typed_values() -> None:
    state = RunState.from_checkpoints(old_checkpoints("complete_run"))
    assert state.finished() == list(Stage)

    generated = state.generate
    assert generated.duplicates == 1
    assert generated.invalid == (
        InvalidInput("bad..name", CandidateSource.BRANDABLE, "empty label (two dots in a row)"),
    )
    by_domain = {candidate.domain: candidate for candidate in generated.candidates}
    assert by_domain["homegym.com"] == Candidate(
        "homegym.com", "homegym.com", CandidateSource.KEYWORD, keyword="home gym"
    )
    assert by_domain["xn--bcher-kva.com"].unicode == "bücher.com"
    assert by_domain["oldgardentools.com"].expiry == ExpiryFacts(12.0, 300, 90)
    assert by_domain["quietkitchen.net"].expiry == ExpiryFacts(4.0, None, None)

    assert state.dns.results["solarpanels.com"] == DnsAnswer(
        Availability.REGISTERED, "listed in registered.txt"
    )
    assert state.rdap.results["oldgardentools.com"] == RdapAnswer(
        Availability.REGISTERED,
        "listed in rdap_records.csv",
        registered_at=date(2008, 4, 30),
        expires_at=date(2026, 4, 30),
        source="rdap",
    )
    assert state.dns.available(generated.domains()) == [
        "homegym.com",
        "mealprep.com",
        "zentrova.com",
        "nikeshoes.com",
        "xn--bcher-kva.com",
        "oldgardentools.com",
        "quietkitchen.net",
    ]
    assert "oldgardentools.com" not in state.rdap.available(generated.domains())

    assert state.score.weights == {
        "commercial": 0.35,
        "expiry": 0.1,
        "intrinsic": 0.3,
        "market": 0.25,
    }
    assert state.score.scores["homegym.com"]["expected_value"] == 3526.85
    assert state.trademark.source_available is True
    assert state.trademark.verdict("nikeshoes.com") == TrademarkEntry(
        TrademarkVerdict.BLOCKED, "nike", "substring"
    )
    assert state.trademark.verdict("never-checked.com") is UNVERIFIED


def test_partial_and_failed_stages_read_with_the_old_defaults() -> None:
    over_budget = RunState.from_checkpoints(old_checkpoints("dns_over_budget"))
    assert list(over_budget.dns.results) == ["homegym.com"]  # what DNS did before its budget

    assert RunState.from_checkpoints(old_checkpoints("dns_failing")).dns == DnsResult({})

    # The score stage failed before choosing weights: `{}`, as `.get()` read it.
    score = RunState.from_checkpoints(old_checkpoints("score_setup_failing")).score
    assert score == ScoreResult(weights=None, scores={})

    # The marks source raised before the stage recorded whether it answered.
    trademark = RunState.from_checkpoints(old_checkpoints("trademark_failing")).trademark
    assert trademark == TrademarkResult(source_available=None, verdicts={})
    unsourced = RunState.from_checkpoints(old_checkpoints("no_trademark_source")).trademark
    assert unsourced.source_available is False
    assert unsourced.verdict("zentrova.com").verdict is TrademarkVerdict.UNVERIFIED


def test_an_empty_generate_checkpoint_reads_as_no_candidates() -> None:
    """The old runner saved `{}` when stage 1 failed; readers used `.get("candidates", [])`."""
    assert result_from_json(Stage.GENERATE, {}) == GenerateResult()


def test_run_state_refuses_unfinished_stages_and_mismatched_results() -> None:
    state = RunState({Stage.GENERATE: GenerateResult()})
    assert Stage.GENERATE in state and Stage.DNS not in state
    with pytest.raises(LookupError, match="stage dns has not finished"):
        _ = state.dns
    with pytest.raises(TypeError, match="stage rdap cannot record a DnsResult"):
        state.record(Stage.RDAP, DnsResult())


def test_a_whois_answer_keeps_its_source() -> None:
    answer = RdapAnswer(Availability.AVAILABLE, "no match", source="whois")
    assert RdapAnswer.from_json(answer.to_json()) == answer


def test_a_closeout_candidate_is_a_purchase_and_keeps_its_price() -> None:
    old = RunState.from_checkpoints(old_checkpoints("complete_run")).generate
    by_domain = {candidate.domain: candidate for candidate in old.candidates}
    assert by_domain["oldgardentools.com"].purchase  # written before prices existed
    assert by_domain["oldgardentools.com"].price is None
    assert not by_domain["homegym.com"].purchase
    assert old.purchases() == ["oldgardentools.com", "quietkitchen.net"]

    listed = Candidate(
        "a.com", "a.com", CandidateSource.CLOSEOUT, expiry=ExpiryFacts(), price=1850.0
    )
    assert listed.to_json()["price"] == 1850.0
    assert Candidate.from_json(listed.to_json()) == listed
    assert (listed.acquisition, by_domain["homegym.com"].acquisition) == (
        "purchase",
        "registration",
    )
