"""A candidate's final tier: the scoring engine's decision, then the trademark gate (ADR 0017).

The scoring engine decides recommended / speculative / rejected from the evidence and the money
gate; the trademark gate (stage 5) runs after it. A name the gate did not clear (blocked,
unverified, or not checked because the stage stopped early) is *rejected*, whatever the engine
said, with the gate's words first: "trademark: blocked by mark nike (exact)". The engine's own
decision is kept beside it (`scoring_tier`, `scoring_tier_reason` in the stored details).

Also here, because every output shows them the same way: the one-line summary of the evidence
behind a name ("keyword 33,100/mo $1.25; 4 sales") and the short labels under which rejected
names are counted ("negative expected profit", "trademark: blocked").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dominus.pipeline.model import Stage
from dominus.pipeline.stage_results import ScoreDocument, TrademarkEntry
from dominus.pipeline.trademark_gate import TrademarkVerdict
from dominus.scoring import Tier
from dominus.scoring.money import NO_LISTED_PRICE

# How each rule of the gate reads in a reason.
RULE_WORDS = {"exact": "exact", "substring": "substring", "edit_distance": "one edit away"}
NO_TRADEMARK_SOURCE = "trademark: not verified, no trademark source"
# Rows scored before tiers were stored (ADR 0014) have no reason to show.
NO_TIER_RECORDED = "scored before tiers were recorded"
TIER_ORDER = (Tier.RECOMMENDED.value, Tier.SPECULATIVE.value, Tier.REJECTED.value)
# The words the runner's degradation reason uses when a stage ran out of its time budget.
OVER_BUDGET = "time budget"


@dataclass(frozen=True)
class FinalTier:
    tier: str  # a Tier value
    reason: str
    stage: str  # the stage that settled it: "score", or "trademark" when the gate did
    trademark_clear: bool
    scoring_tier: str = ""  # the engine's own decision, before the gate
    scoring_reason: str = ""


def trademark_phrase(entry: TrademarkEntry | None, unchecked: str) -> str | None:
    """Why the gate did not clear the name; None when it did. `entry` None: the stage never
    got to the name (`unchecked` says why: "not checked (stage over budget)")."""
    if entry is None:
        return f"trademark: {unchecked}"
    if entry.verdict is TrademarkVerdict.CLEAR:
        return None
    if entry.verdict is TrademarkVerdict.BLOCKED:
        rule = RULE_WORDS.get(entry.rule or "", entry.rule or "match")
        return f"trademark: blocked by mark {entry.mark} ({rule})"
    return NO_TRADEMARK_SOURCE


def final_tier(score: ScoreDocument, entry: TrademarkEntry | None, unchecked: str) -> FinalTier:
    """The engine's tier, unless the gate did not clear the name: then rejected, the gate's
    reason first (and the engine's after it when the engine did not recommend the name).
    A score document from before tiers existed (a run resumed across the upgrade) reads as
    recommended when it met the thresholds, rejected otherwise."""
    scoring_tier = str(score.get("tier") or "")
    if not scoring_tier:
        scoring_tier = (Tier.RECOMMENDED if score.get("meets_thresholds") else Tier.REJECTED).value
    scoring_reason = str(score.get("tier_reason") or NO_TIER_RECORDED)
    gate = trademark_phrase(entry, unchecked)
    if gate is None:
        return FinalTier(
            scoring_tier, scoring_reason, Stage.SCORE.value, True, scoring_tier, scoring_reason
        )
    reason = gate if scoring_tier == Tier.RECOMMENDED.value else f"{gate}; {scoring_reason}"
    return FinalTier(
        Tier.REJECTED.value, reason, Stage.TRADEMARK.value, False, scoring_tier, scoring_reason
    )


def stored_final_tier(row: Mapping[str, Any]) -> FinalTier:
    """The final tier of a stored score row. Rows written since ADR 0017 carry it in their
    details; older ones are worked out from what they hold (the engine's tier and the row's
    trademark verdict), or, scored before tiers existed, from the row's `recommended`."""
    details = row["details"]
    if "scoring_tier" in details:
        stage = str(details.get("stage") or Stage.SCORE.value)
        clear = row["trademark_verdict"] == TrademarkVerdict.CLEAR.value
        return FinalTier(str(details["tier"]), str(details["tier_reason"]), stage, clear)
    if "tier" not in details:
        tier = Tier.RECOMMENDED if row["recommended"] else Tier.REJECTED
        clear = row["trademark_verdict"] == TrademarkVerdict.CLEAR.value
        stage = Stage.SCORE if clear else Stage.TRADEMARK
        return FinalTier(tier.value, NO_TIER_RECORDED, stage.value, clear)
    entry = TrademarkEntry(
        TrademarkVerdict(row["trademark_verdict"]),
        row["trademark_mark"],
        (details.get("trademark") or {}).get("rule"),
    )
    return final_tier(details, entry, "not checked")


# --- the evidence behind a name, in one line -------------------------------------------------
def evidence_summary(details: Mapping[str, Any]) -> str | None:
    """ "keyword 33,100/mo $1.25; 4 sales; expiry 17.5 y 340 links": the evidence that counted
    for the decision (None: none did, the name has only its intrinsic signal)."""
    evidence = details.get("evidence") or {}
    parts = []
    keyword = evidence.get("keyword")
    if keyword and keyword.get("counts"):
        volume = _number(keyword.get("monthly_volume"))
        parts.append(f"keyword {volume:,.0f}/mo ${_number(keyword.get('cpc')):,.2f}")
    sales = evidence.get("comparable_sales")
    if sales and sales.get("counts"):
        count = int(_number(sales.get("relevant")))
        parts.append(f"{count} sale" if count == 1 else f"{count} sales")
    expiry = evidence.get("expiry")
    if expiry and expiry.get("counts"):
        parts.append(_expiry_words(expiry))
    return "; ".join(parts) or None


def _expiry_words(expiry: Mapping[str, Any]) -> str:
    facts = []
    if _number(expiry.get("age_years")) > 0:
        facts.append(f"{_number(expiry.get('age_years')):g} y")
    if _number(expiry.get("backlinks")) > 0:
        facts.append(f"{_number(expiry.get('backlinks')):,.0f} links")
    if _number(expiry.get("wayback_snapshots")) > 0:
        facts.append(f"{_number(expiry.get('wayback_snapshots')):,.0f} snapshots")
    return "expiry " + " ".join(facts)


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and value > 0 else 0.0


def expected_profit(details: Mapping[str, Any]) -> float | None:
    """The money gate's figure (None: a price is missing, or a row scored before it existed)."""
    value = (details.get("money") or {}).get("expected_profit")
    return float(value) if isinstance(value, int | float) else None


# --- why rejected names were rejected, counted -------------------------------------------------
def rejection_labels(details: Mapping[str, Any], final: FinalTier) -> list[str]:
    """Short labels for what rejected a name, one per failed gate: "trademark: blocked",
    "negative expected profit", "no listed price", "confidence below threshold"... A name the
    engine found speculative and the gate rejected counts under the gate only (its other
    failures come from having no evidence, which the speculative tier already says)."""
    labels = []
    if not final.trademark_clear:
        labels.append(_trademark_label(final.reason))
    if details.get("scoring_tier", details.get("tier")) != Tier.REJECTED.value:
        return labels
    gates = details.get("gates") or {}
    if gates.get("money") is False:
        labels.append(_money_label(details.get("money") or {}))
    if gates.get("confidence") is False:
        labels.append("confidence below threshold")
    if gates.get("score") is False:
        labels.append("score below threshold")
    return labels


def _trademark_label(reason: str) -> str:
    if reason.startswith("trademark: blocked"):
        return "trademark: blocked"
    if reason.startswith(NO_TRADEMARK_SOURCE):
        return "trademark: not verified"
    return "trademark: not checked"


def _money_label(money: Mapping[str, Any]) -> str:
    problem = money.get("problem")
    if problem and NO_LISTED_PRICE in problem:
        return "no listed price"
    if problem:
        return "no price for the TLD"
    return "negative expected profit"


def count_rejections(labelled: Iterable[list[str]]) -> dict[str, int]:
    """Label → names, most frequent first (ties by label)."""
    counts = Counter(label for labels in labelled for label in labels)
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


# --- names a stage never got to ----------------------------------------------------------------
def not_checked(report: Mapping[str, Any] | None) -> str:
    """Why a stage has no answer for a name, from the stage's report in the run: it ran out of
    its time budget, it failed, or the run has not (or never) reached it."""
    if report is None or report.get("status") == "running":
        return "not checked (the run did not reach this stage)"
    if report.get("status") == "degraded":
        if OVER_BUDGET in str(report.get("reason") or ""):
            return "not checked (stage over budget)"
        return "not checked (stage failed)"
    return "not checked"
