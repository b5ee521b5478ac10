"""The final tier after the trademark gate, the evidence line and the rejection labels (a name the
gate blocks or cannot verify is never recommended; recommendations show the evidence that backed
them), written from the specification's words."""

from __future__ import annotations

from typing import Any

import pytest

from dominus.pipeline.stage_results import TrademarkEntry
from dominus.pipeline.tiers import (
    count_rejections,
    evidence_summary,
    expected_profit,
    final_tier,
    not_checked,
    rejection_labels,
    stored_final_tier,
)
from dominus.pipeline.trademark_gate import TrademarkVerdict

CLEAR = TrademarkEntry(TrademarkVerdict.CLEAR)
NIKE_EXACT = TrademarkEntry(TrademarkVerdict.BLOCKED, "NIKE", "exact")
APPLE_SUBSTRING = TrademarkEntry(TrademarkVerdict.BLOCKED, "apple", "substring")
GOOGLE_NEAR = TrademarkEntry(TrademarkVerdict.BLOCKED, "google", "edit_distance")
UNVERIFIED = TrademarkEntry(TrademarkVerdict.UNVERIFIED)
OVER_BUDGET = "not checked (stage over budget)"

RECOMMENDED = {"tier": "recommended", "tier_reason": "every gate passes: evidence: keyword"}
SPECULATIVE = {"tier": "speculative", "tier_reason": "only the intrinsic signal (no keyword data)"}
REJECTED = {"tier": "rejected", "tier_reason": "expected profit −$21.40: EV $310.00"}


@pytest.mark.parametrize(
    ("score", "entry", "tier", "reason", "stage"),
    [
        (RECOMMENDED, CLEAR, "recommended", RECOMMENDED["tier_reason"], "score"),
        (SPECULATIVE, CLEAR, "speculative", SPECULATIVE["tier_reason"], "score"),
        (REJECTED, CLEAR, "rejected", REJECTED["tier_reason"], "score"),
        (
            RECOMMENDED,
            NIKE_EXACT,
            "rejected",
            "trademark: blocked by mark NIKE (exact)",
            "trademark",
        ),
        (
            RECOMMENDED,
            APPLE_SUBSTRING,
            "rejected",
            "trademark: blocked by mark apple (substring)",
            "trademark",
        ),
        (
            RECOMMENDED,
            UNVERIFIED,
            "rejected",
            "trademark: not verified, no trademark source",
            "trademark",
        ),
        (RECOMMENDED, None, "rejected", f"trademark: {OVER_BUDGET}", "trademark"),
        # The engine did not recommend it either: the gate first, then the engine's reason.
        (
            SPECULATIVE,
            GOOGLE_NEAR,
            "rejected",
            "trademark: blocked by mark google (one edit away); "
            "only the intrinsic signal (no keyword data)",
            "trademark",
        ),
        (
            REJECTED,
            UNVERIFIED,
            "rejected",
            "trademark: not verified, no trademark source; expected profit −$21.40: EV $310.00",
            "trademark",
        ),
    ],
)
def test_the_gate_comes_after_scoring(
    score: dict[str, Any], entry: TrademarkEntry | None, tier: str, reason: str, stage: str
) -> None:
    final = final_tier(score, entry, OVER_BUDGET)
    assert (final.tier, final.reason, final.stage) == (tier, reason, stage)
    assert final.trademark_clear is (entry == CLEAR)
    # The engine's own decision is kept beside the final one.
    assert (final.scoring_tier, final.scoring_reason) == (score["tier"], score["tier_reason"])


def test_a_score_from_before_tiers_reads_as_its_thresholds_said() -> None:
    """A run resumed across the upgrade holds score documents without `tier`."""
    assert final_tier({"meets_thresholds": True}, CLEAR, OVER_BUDGET).tier == "recommended"
    assert final_tier({"meets_thresholds": False}, CLEAR, OVER_BUDGET).tier == "rejected"
    assert final_tier({"meets_thresholds": True}, NIKE_EXACT, OVER_BUDGET).tier == "rejected"


def row(details: dict[str, Any], verdict: str = "clear", recommended: bool = False) -> Any:
    return {
        "details": details,
        "trademark_verdict": verdict,
        "trademark_mark": "nike" if verdict == "blocked" else None,
        "recommended": recommended,
    }


def test_stored_rows_of_every_age_give_a_final_tier() -> None:
    # Written since ADR 0017: the details carry the final tier.
    new = row(
        {"tier": "rejected", "tier_reason": "trademark: x", "stage": "trademark"}
        | {"scoring_tier": "recommended", "scoring_tier_reason": "every gate passes"},
        verdict="blocked",
    )
    assert stored_final_tier(new).tier == "rejected"
    assert stored_final_tier(new).stage == "trademark"
    # Written by the scoring engine before ADR 0017: the engine's tier, the gate applied now.
    engine_only = row(
        {"tier": "recommended", "tier_reason": "ok", "trademark": {"rule": "exact"}},
        verdict="blocked",
    )
    final = stored_final_tier(engine_only)
    assert (final.tier, final.reason) == ("rejected", "trademark: blocked by mark nike (exact)")
    # Written before tiers: the row's `recommended` (the old decision, gate included).
    assert stored_final_tier(row({}, recommended=True)).tier == "recommended"
    old = stored_final_tier(row({}, verdict="blocked"))
    assert (old.tier, old.stage) == ("rejected", "trademark")


EVIDENCE: dict[str, Any] = {
    "keyword": {"keyword": "home gym", "monthly_volume": 33100, "cpc": 1.25, "counts": True},
    "comparable_sales": {"relevant": 3, "required": 3, "counts": True},
    "expiry": {"age_years": 18, "backlinks": 1200, "wayback_snapshots": 0, "counts": True},
}


@pytest.mark.parametrize(
    ("evidence", "line"),
    [
        ({"keyword": EVIDENCE["keyword"]}, "keyword 33,100/mo $1.25"),
        ({"comparable_sales": EVIDENCE["comparable_sales"]}, "3 sales"),
        ({"expiry": EVIDENCE["expiry"]}, "expiry 18 y 1,200 links"),
        (EVIDENCE, "keyword 33,100/mo $1.25; 3 sales; expiry 18 y 1,200 links"),
        # What did not count as evidence is not shown as evidence.
        (
            {
                "keyword": {"monthly_volume": 880, "cpc": 0, "counts": False},
                "comparable_sales": {"relevant": 1, "required": 3, "counts": False},
                "expiry": None,
            },
            None,
        ),
        ({}, None),
    ],
)
def test_the_evidence_line(evidence: dict[str, Any], line: str | None) -> None:
    assert evidence_summary({"evidence": evidence}) == line


def test_expected_profit_is_the_money_gates_figure() -> None:
    assert expected_profit({"money": {"expected_profit": -21.4}}) == -21.4
    assert expected_profit({"money": {"expected_profit": None}}) is None
    assert expected_profit({}) is None


def details(tier: str, gates: dict[str, bool], problem: str | None = None) -> dict[str, Any]:
    return {"scoring_tier": tier, "gates": gates, "money": {"problem": problem}}


@pytest.mark.parametrize(
    ("document", "entry", "labels"),
    [
        (details("rejected", {"money": False}), CLEAR, ["negative expected profit"]),
        (
            details("rejected", {"money": False}, "no listed price: shown with its buy max only"),
            CLEAR,
            ["no listed price"],
        ),
        (
            details("rejected", {"money": False}, "no price for .dev in the bundled table"),
            CLEAR,
            ["no price for the TLD"],
        ),
        (
            details("rejected", {"confidence": False, "score": False, "money": True}),
            CLEAR,
            ["confidence below threshold", "score below threshold"],
        ),
        (details("recommended", {"money": True}), NIKE_EXACT, ["trademark: blocked"]),
        (details("recommended", {}), UNVERIFIED, ["trademark: not verified"]),
        (details("recommended", {}), None, ["trademark: not checked"]),
        # Speculative by the engine, then blocked: counted under the gate only.
        (
            details("speculative", {"evidence": False, "money": False}),
            NIKE_EXACT,
            ["trademark: blocked"],
        ),
        (
            details("rejected", {"money": False}),
            NIKE_EXACT,
            ["trademark: blocked", "negative expected profit"],
        ),
    ],
)
def test_what_rejected_a_name(
    document: dict[str, Any], entry: TrademarkEntry | None, labels: list[str]
) -> None:
    final = final_tier(
        {"tier": document["scoring_tier"], "tier_reason": "x"}, entry, "not checked (stage failed)"
    )
    assert rejection_labels(document, final) == labels


def test_rejections_are_counted_most_frequent_first() -> None:
    counted = count_rejections([["b"], ["a", "b"], ["c"], ["a"], ["b"]])
    assert list(counted.items()) == [("b", 3), ("a", 2), ("c", 1)]


@pytest.mark.parametrize(
    ("report", "words"),
    [
        (
            {"status": "degraded", "reason": "dns: time budget of 30 s exceeded (3 of 9 names)"},
            "not checked (stage over budget)",
        ),
        (
            {"status": "degraded", "reason": "rdap: failed: RuntimeError: boom"},
            "not checked (stage failed)",
        ),
        (None, "not checked (the run did not reach this stage)"),
        ({"status": "running"}, "not checked (the run did not reach this stage)"),
        ({"status": "completed"}, "not checked"),
    ],
)
def test_why_a_stage_has_no_answer(report: dict[str, Any] | None, words: str) -> None:
    assert not_checked(report) == words
