"""What a finished run stores: a row per candidate (upserted by domain), a row per scored
candidate, and the summary shown by `dominus runs show` and the API."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from dominus.pipeline.model import Stage
from dominus.pipeline.stage_results import (
    REGISTRATION,
    UNVERIFIED,
    Candidate,
    DnsAnswer,
    RdapAnswer,
    RunState,
    ScoreDocument,
    TrademarkEntry,
)
from dominus.pipeline.tiers import (
    TIER_ORDER,
    count_rejections,
    evidence_summary,
    expected_profit,
    final_tier,
    not_checked,
    rejection_labels,
    stored_final_tier,
)
from dominus.providers.models import Availability
from dominus.providers.sets import ProviderSet
from dominus.scoring import Tier

TOP_RECOMMENDATIONS = 10


def assemble_results(
    state: RunState, providers: ProviderSet, stage_reports: Mapping[str, Any] | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """The rows to store and the run's summary. `stage_reports` (the run's `stages`) say why a
    stage left names unchecked, for the reason of a name the trademark stage never got to."""
    generated = state.generate
    dns = state.dns.results
    rdap = state.rdap.results
    scores = state.score.scores
    trademark = state.trademark
    unchecked = not_checked((stage_reports or {}).get(Stage.TRADEMARK.value))
    by_domain = {candidate.domain: candidate for candidate in generated.candidates}

    candidate_rows = [_candidate_row(candidate, dns, rdap) for candidate in generated.candidates]
    score_rows = [
        _score_row(
            by_domain.get(domain),
            domain,
            score,
            trademark.verdicts.get(domain),
            rdap.get(domain),
            unchecked,
        )
        for domain, score in scores.items()
    ]
    recommended = sorted(
        (row for row in score_rows if row["recommended"]),
        key=lambda row: (_profit_key(row), -row["expected_value"], row["domain"]),
    )
    tiers = Counter(row["details"]["tier"] for row in score_rows)
    registrations = generated.registrations()
    dns_passed = state.dns.available(registrations)
    summary = {
        "inputs": len(generated.candidates) + len(generated.invalid) + generated.duplicates,
        "candidates": len(generated.candidates),
        "invalid": len(generated.invalid),
        "duplicates": generated.duplicates,
        # DNS and RDAP decide for registrations only; RDAP's answers about purchases (bought from
        # a listing, never dropped for being registered) are counted apart.
        "dns": _availability_counts(dns, registrations),
        "rdap": _availability_counts(rdap, dns_passed),
        "purchase_candidates": len(generated.purchases()),
        "purchase_rdap": _availability_counts(rdap, generated.purchases()),
        # Who confirmed the available registrations: "rdap", or "whois" for TLDs without RDAP.
        "availability_sources": dict(
            Counter(
                rdap[domain].source
                for domain in dns_passed
                if domain in rdap and rdap[domain].availability is Availability.AVAILABLE
            )
        ),
        "scored": len(scores),
        "trademark": dict(Counter(entry.verdict.value for entry in trademark.verdicts.values())),
        "recommended": len(recommended),
        # The final tiers (after the trademark gate) and what rejected the rejected names.
        "tiers": {tier: tiers[tier] for tier in TIER_ORDER},
        "rejected_reasons": count_rejections(
            rejection_labels(row["details"], stored_final_tier(row))
            for row in score_rows
            if row["details"]["tier"] == Tier.REJECTED.value
        ),
        # The best recommendations, by expected profit (the money gate's figure).
        "top": [
            {
                "domain": row["domain"],
                "acquisition": row["details"]["acquisition"],
                "listed_price": row["details"]["listed_price"],
                "expected_profit": expected_profit(row["details"]),
                "evidence": evidence_summary(row["details"]),
                "expected_value": row["expected_value"],
                "suggested_buy_max": row["suggested_buy_max"],
                "confidence": row["confidence"],
            }
            for row in recommended[:TOP_RECOMMENDATIONS]
        ],
        "providers": providers.label,
        "sample_data": providers.is_sample,
    }
    return candidate_rows, score_rows, summary


def _candidate_row(
    candidate: Candidate, dns: Mapping[str, DnsAnswer], rdap: Mapping[str, RdapAnswer]
) -> dict[str, Any]:
    domain = candidate.domain
    answer: DnsAnswer | RdapAnswer | None = rdap.get(domain) or dns.get(domain)
    dated = answer if isinstance(answer, RdapAnswer) else None
    return {
        "domain": domain,
        "unicode_domain": candidate.unicode,
        "source": candidate.source.value,
        # None: not checked (run degraded)
        "availability": answer.availability.value if answer is not None else None,
        "availability_detail": _detail(answer),
        "registered_at": dated.registered_at if dated is not None else None,
        "expires_at": dated.expires_at if dated is not None else None,
    }


def _detail(answer: DnsAnswer | RdapAnswer | None) -> str | None:
    """Which source answered leads the detail ("rdap: HTTP 404 at ...", "whois: no match at
    ..."): it has no column of its own, so no migration. DNS answers stay as they are."""
    if answer is None:
        return None
    if isinstance(answer, RdapAnswer):
        return f"{answer.source}: {answer.detail}"
    return answer.detail


def _score_row(
    candidate: Candidate | None,
    domain: str,
    score: ScoreDocument,
    verdict: TrademarkEntry | None,
    availability: RdapAnswer | None,
    unchecked: str,
) -> dict[str, Any]:
    """`verdict` None: the trademark stage never got to the name (`unchecked` says why)."""
    signals = score["signals"]
    entry = verdict or UNVERIFIED
    final = final_tier(score, verdict, unchecked)
    return {
        "domain": domain,
        "intrinsic": signals["intrinsic"],
        "commercial": signals["commercial"],
        "market": signals["market"],
        "expiry": signals["expiry"],
        "weighted_score": score["weighted_score"],
        "confidence": score["confidence"],
        "expected_value": score["expected_value"],
        "suggested_buy_max": score["suggested_buy_max"],
        "suggested_list_price": score["suggested_list_price"],
        # The gate is non-negotiable: every gate of the engine AND cleared by a trademark source.
        "recommended": final.tier == Tier.RECOMMENDED.value,
        "trademark_verdict": entry.verdict.value,
        "trademark_mark": entry.mark,
        # How the name would be had and its final tier, kept in the details document (no
        # columns of their own, no migration). The engine's own decision stays beside the
        # final one; `tier`, `tier_reason`, `recommended` and `gates` are the final ones.
        "details": score
        | {
            "trademark": entry.to_json(),
            "availability_source": availability.source if availability is not None else None,
            "tier": final.tier,
            "tier_reason": final.reason,
            "stage": final.stage,
            "scoring_tier": final.scoring_tier,
            "scoring_tier_reason": final.scoring_reason,
            "recommended": final.tier == Tier.RECOMMENDED.value,
            # A score from before the engine had gates (a resumed old run) has none.
            "gates": dict(score.get("gates") or {}) | {"trademark": final.trademark_clear},
        }
        | _acquisition(candidate),
    }


def _profit_key(row: dict[str, Any]) -> float:
    """Sorts by expected profit, highest first; an unknown profit last."""
    profit = expected_profit(row["details"])
    return -profit if profit is not None else math.inf


def _acquisition(candidate: Candidate | None) -> dict[str, Any]:
    if candidate is None:  # not reached: every scored name is a candidate of the run
        return {"acquisition": REGISTRATION, "listed_price": None}
    return {"acquisition": candidate.acquisition, "listed_price": candidate.price}


def _availability_counts(
    results: Mapping[str, DnsAnswer | RdapAnswer], asked: Sequence[str]
) -> dict[str, int]:
    """What a lookup stage said about the names it was to ask (`asked`)."""
    answers = [results[domain] for domain in asked if domain in results]
    counts = Counter(answer.availability for answer in answers)
    return {
        "available": counts[Availability.AVAILABLE],
        "registered": counts[Availability.REGISTERED],
        "unknown": counts[Availability.UNKNOWN],
        "unchecked": len(asked) - len(answers),
    }
