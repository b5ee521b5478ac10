"""What a finished run stores: a row per candidate (upserted by domain), a row per scored
candidate, and the summary shown by `dominus runs show` and the API."""

from __future__ import annotations

from collections import Counter
from typing import Any

from dominus.pipeline.model import Stage
from dominus.pipeline.store import parse_date
from dominus.providers.sets import ProviderSet

TOP_RECOMMENDATIONS = 10
UNVERIFIED = {"verdict": "unverified", "mark": None, "rule": None}


def assemble_results(
    state: dict[Stage, dict[str, Any]], providers: ProviderSet
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    generated = state[Stage.GENERATE]
    dns = state[Stage.DNS].get("results", {})
    rdap = state[Stage.RDAP].get("results", {})
    scores = state[Stage.SCORE].get("scores", {})
    verdicts = state[Stage.TRADEMARK].get("verdicts", {})

    candidate_rows = [_candidate_row(candidate, dns, rdap) for candidate in generated["candidates"]]
    score_rows = [
        _score_row(domain, score, verdicts.get(domain, UNVERIFIED), rdap.get(domain, {}))
        for domain, score in scores.items()
    ]
    recommended = sorted(
        (row for row in score_rows if row["recommended"]),
        key=lambda row: (-row["expected_value"], row["domain"]),
    )
    summary = {
        "inputs": len(generated["candidates"])
        + len(generated["invalid"])
        + generated["duplicates"],
        "candidates": len(generated["candidates"]),
        "invalid": len(generated["invalid"]),
        "duplicates": generated["duplicates"],
        "dns": _availability_counts(dns, len(generated["candidates"])),
        "rdap": _availability_counts(rdap, _count_available(dns)),
        # Who confirmed the available names: "rdap", or "whois" for TLDs without RDAP.
        "availability_sources": dict(
            Counter(
                result.get("source", "rdap")
                for result in rdap.values()
                if result["availability"] == "available"
            )
        ),
        "scored": len(scores),
        "trademark": dict(Counter(v["verdict"] for v in verdicts.values())),
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
    candidate: dict[str, Any], dns: dict[str, Any], rdap: dict[str, Any]
) -> dict[str, Any]:
    domain = candidate["domain"]
    answer = rdap.get(domain) or dns.get(domain) or {}
    return {
        "domain": domain,
        "unicode_domain": candidate["unicode"],
        "source": candidate["source"],
        "availability": answer.get("availability"),  # None: not checked (run degraded)
        # Which source answered ("rdap: HTTP 404 at ...", "whois: no match at ..."); no column
        # of its own, so no migration. DNS-only answers (dropped before RDAP) stay as they are.
        "availability_detail": (
            f"{answer['source']}: {answer.get('detail')}"
            if "source" in answer
            else answer.get("detail")
        ),
        "registered_at": parse_date(answer.get("registered_at")),
        "expires_at": parse_date(answer.get("expires_at")),
    }


def _score_row(
    domain: str, score: dict[str, Any], verdict: dict[str, Any], availability: dict[str, Any]
) -> dict[str, Any]:
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
        "recommended": bool(score["meets_thresholds"]) and verdict["verdict"] == "clear",
        "trademark_verdict": verdict["verdict"],
        "trademark_mark": verdict["mark"],
        "details": score
        | {"trademark": verdict, "availability_source": availability.get("source")},
    }


def _availability_counts(results: dict[str, Any], expected: int) -> dict[str, int]:
    counts = Counter(result["availability"] for result in results.values())
    return {
        "available": counts["available"],
        "registered": counts["registered"],
        "unknown": counts["unknown"],
        "unchecked": max(0, expected - len(results)),
    }


def _count_available(results: dict[str, Any]) -> int:
    return sum(1 for result in results.values() if result["availability"] == "available")
