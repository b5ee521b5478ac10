"""Stages 2 to 5. Each takes what the stages before it saved (their checkpoints) and fills
`partial` as it goes, so that when it stops early (its budget ran out, or it failed for good)
the run keeps what was done and carries on with it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

from dominus.pipeline.concurrency import bounded_map
from dominus.pipeline.trademark_gate import TrademarkGate
from dominus.providers.models import Availability, ExpiryFacts, StopSignal
from dominus.providers.sets import ProviderSet
from dominus.scoring import ComparablesIndex, ScoringConfig, ScoringInput, Weights
from dominus.scoring import score_domain as score_one

Progress = Callable[[int, int], None]  # (done, total)


@dataclass(frozen=True)
class StageEnvironment:
    providers: ProviderSet
    stop: StopSignal
    deadline: float  # time.monotonic() value
    progress: Progress
    dns_concurrency: int
    rdap_concurrency: int


class StageIncompleteError(Exception):
    """The stage stopped before the end (out of time); what it did is in `partial`."""


def dns_prefilter(
    candidates: list[str], env: StageEnvironment, partial: dict[str, Any]
) -> dict[str, Any]:
    """Keeps the names DNS does not show as registered. `results`: domain → verdict."""

    def lookup(domain: str) -> dict[str, Any]:
        verdict = env.providers.dns.check(domain)
        return {"availability": verdict.availability.value, "detail": verdict.detail}

    return _look_up_all(candidates, lookup, env.dns_concurrency, env, partial, "checked")


def rdap_confirm(
    candidates: list[str], env: StageEnvironment, partial: dict[str, Any]
) -> dict[str, Any]:
    """Asks each name's registry; only a 404 (no such domain) confirms availability."""

    def lookup(domain: str) -> dict[str, Any]:
        record = env.providers.rdap.lookup(domain, env.stop)
        return {
            "availability": record.availability.value,
            "detail": record.detail,
            "registered_at": _iso(record.registered_at),
            "expires_at": _iso(record.expires_at),
            "source": record.source,
        }

    return _look_up_all(candidates, lookup, env.rdap_concurrency, env, partial, "confirmed")


def _look_up_all(
    candidates: list[str],
    lookup: Callable[[str], dict[str, Any]],
    concurrency: int,
    env: StageEnvironment,
    partial: dict[str, Any],
    verb: str,
) -> dict[str, Any]:
    results: dict[str, Any] = partial.setdefault("results", {})
    lookups = bounded_map(
        candidates,
        lookup,
        concurrency=concurrency,
        stop=env.stop,
        deadline=env.deadline,
        on_done=lambda done: env.progress(done, len(candidates)),
        results=results,
    )
    if not lookups.complete and not env.stop.is_set():
        raise StageIncompleteError(f"{len(results)} of {len(candidates)} names {verb}")
    return partial


@dataclass(frozen=True)
class ScoringSetup:
    weights: Weights
    config: ScoringConfig
    today: date
    renewal_cost: float | None


def score_candidates(
    candidates: list[dict[str, Any]],
    setup: ScoringSetup,
    env: StageEnvironment,
    partial: dict[str, Any],
    clock: Callable[[], float],
) -> dict[str, Any]:
    """Scores every candidate (signals the data allows; the rest are reallocated)."""
    scores: dict[str, Any] = partial.setdefault("scores", {})
    keyword_data = env.providers.keyword_data
    comparables = ComparablesIndex(env.providers.comparable_sales, setup.config)
    for index, candidate in enumerate(candidates):
        domain = candidate["domain"]
        if domain in scores:
            continue
        if env.stop.is_set():
            return partial
        if clock() >= env.deadline:
            raise StageIncompleteError(f"{len(scores)} of {len(candidates)} names scored")
        keyword = keyword_data.get(candidate.get("keyword") or domain.split(".", 1)[0])
        inputs = ScoringInput(
            domain=domain,
            keyword=keyword,
            market=comparables.market(domain, setup.today),
            expiry=_expiry(candidate.get("expiry")),
            renewal_cost=setup.renewal_cost,
        )
        scores[domain] = score_one(inputs, setup.weights, setup.config, setup.today).to_dict()
        if index % 100 == 0:
            env.progress(len(scores), len(candidates))
    env.progress(len(scores), len(candidates))
    return partial


def trademark_check(
    domains: list[str], env: StageEnvironment, partial: dict[str, Any], clock: Callable[[], float]
) -> dict[str, Any]:
    """The gate: no candidate is recommended unless a trademark source cleared it."""
    verdicts: dict[str, Any] = partial.setdefault("verdicts", {})
    marks = env.providers.trademarks.marks()
    partial["source_available"] = marks is not None
    gate = TrademarkGate(marks)
    for index, domain in enumerate(domains):
        if domain in verdicts:
            continue
        if env.stop.is_set():
            return partial
        if clock() >= env.deadline:
            raise StageIncompleteError(f"{len(verdicts)} of {len(domains)} names checked")
        result = gate.check(domain)
        verdicts[domain] = {
            "verdict": result.verdict.value,
            "mark": result.matched_mark,
            "rule": result.rule,
        }
        if index % 200 == 0:
            env.progress(len(verdicts), len(domains))
    env.progress(len(verdicts), len(domains))
    return partial


def passing(results: dict[str, Any], domains: list[str]) -> list[str]:
    """The names a lookup stage found available (unchecked or unknown ones do not pass)."""
    return [
        domain
        for domain in domains
        if results.get(domain, {}).get("availability") == Availability.AVAILABLE.value
    ]


def _iso(value: date | None) -> str | None:
    return value.isoformat() if value is not None else None


def _expiry(facts: dict[str, Any] | None) -> ExpiryFacts | None:
    if facts is None:
        return None
    return ExpiryFacts(
        age_years=facts.get("age"),
        backlinks=facts.get("backlinks"),
        wayback_snapshots=facts.get("wayback"),
    )
