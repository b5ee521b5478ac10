"""What a finished run stores: a row per candidate (upserted by domain), a row per scored
candidate, and the summary shown by `dominus runs show` and the API."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from dominus.pipeline.stage_results import (
    Candidate,
    DnsAnswer,
    RdapAnswer,
    RunState,
    ScoreDocument,
    TrademarkEntry,
)
from dominus.pipeline.trademark_gate import TrademarkVerdict
from dominus.providers.models import Availability
from dominus.providers.sets import ProviderSet

TOP_RECOMMENDATIONS = 10


def assemble_results(
    state: RunState, providers: ProviderSet
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    generated = state.generate
    dns = state.dns.results
    rdap = state.rdap.results
    scores = state.score.scores
    trademark = state.trademark

    candidate_rows = [_candidate_row(candidate, dns, rdap) for candidate in generated.candidates]
    score_rows = [
        _score_row(domain, score, trademark.verdict(domain)) for domain, score in scores.items()
    ]
    recommended = sorted(
        (row for row in score_rows if row["recommended"]),
        key=lambda row: (-row["expected_value"], row["domain"]),
    )
    summary = {
        "inputs": len(generated.candidates) + len(generated.invalid) + generated.duplicates,
        "candidates": len(generated.candidates),
        "invalid": len(generated.invalid),
        "duplicates": generated.duplicates,
        "dns": _availability_counts(dns, len(generated.candidates)),
        "rdap": _availability_counts(rdap, _count_available(dns)),
        "scored": len(scores),
        "trademark": dict(Counter(entry.verdict.value for entry in trademark.verdicts.values())),
        "recommended": len(recommended),
        "top": [
            {
                "domain": row["domain"],
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
        "availability_detail": answer.detail if answer is not None else None,
        "registered_at": dated.registered_at if dated is not None else None,
        "expires_at": dated.expires_at if dated is not None else None,
    }


def _score_row(domain: str, score: ScoreDocument, verdict: TrademarkEntry) -> dict[str, Any]:
    signals = score["signals"]
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
        # The gate is non-negotiable: thresholds met AND cleared by a trademark source.
        "recommended": bool(score["meets_thresholds"])
        and verdict.verdict is TrademarkVerdict.CLEAR,
        "trademark_verdict": verdict.verdict.value,
        "trademark_mark": verdict.mark,
        "details": score | {"trademark": verdict.to_json()},
    }


def _availability_counts(
    results: Mapping[str, DnsAnswer | RdapAnswer], expected: int
) -> dict[str, int]:
    counts = Counter(answer.availability for answer in results.values())
    return {
        "available": counts[Availability.AVAILABLE],
        "registered": counts[Availability.REGISTERED],
        "unknown": counts[Availability.UNKNOWN],
        "unchecked": max(0, expected - len(results)),
    }


def _count_available(results: Mapping[str, DnsAnswer]) -> int:
    return sum(1 for answer in results.values() if answer.availability is Availability.AVAILABLE)
