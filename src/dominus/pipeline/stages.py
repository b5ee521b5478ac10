"""Stages 2 to 5. Each takes what the stages before it handed on and fills its `partial` as it
goes, so that when it stops early (its budget ran out, or it failed for good) the run keeps what
was done and carries on with it: `partial.result()` is the stage's result either way.

In the availability stages (2 and 3) one name's lookup that raises costs that name only: it is
UNKNOWN ("lookup failed: ..."), logged, and the other names go on. The exceptions are the
TRANSIENT_ERRORS (the network or the database is down, not one answer bad: the runner retries
the stage) and a stop or a lost claim.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TypeVar

import httpx

from dominus.errors import ClaimLostError, DatabaseBusyError, JobAbortedError
from dominus.pipeline.concurrency import StopAtDeadline, bounded_map
from dominus.pipeline.scoring_input import scoring_input
from dominus.pipeline.stage_results import (
    Candidate,
    DnsAnswer,
    DnsResult,
    RdapAnswer,
    RdapResult,
    ScoreDocument,
    ScoreResult,
    TrademarkEntry,
    TrademarkResult,
)
from dominus.pipeline.trademark_gate import TrademarkGate
from dominus.pipeline.valuing import Valuer
from dominus.providers.models import Availability, StopSignal
from dominus.providers.sets import ProviderSet
from dominus.scoring import ComparablesIndex, ScoringConfig, Weights
from dominus.scoring import score_domain as score_one
from dominus.valuation import Appraisal, ValueModel

log = logging.getLogger("dominus.pipeline")

Progress = Callable[[int, int], None]  # (done, total)
A = TypeVar("A", DnsAnswer, RdapAnswer)

# Failures that say a stage cannot work now (retried as a whole by the runner), not that one
# name's answer was bad.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    DatabaseBusyError,
    ConnectionError,
    TimeoutError,
    httpx.TransportError,
)
_NOT_ONE_NAMES_FAILURE: tuple[type[BaseException], ...] = (
    *TRANSIENT_ERRORS,
    JobAbortedError,
    ClaimLostError,
)


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


# --- what a stage has done so far (filled as it goes; kept when it stops early) --------------
@dataclass
class DnsPartial:
    results: dict[str, DnsAnswer] = field(default_factory=dict)
    # Names no resolver could be believed about (canaries not found): not kept in the
    # checkpoint, the stage's degradation reason says it once the stage is done.
    canary_failed: set[str] = field(default_factory=set)

    def result(self) -> DnsResult:
        return DnsResult(dict(self.results))


@dataclass
class RdapPartial:
    results: dict[str, RdapAnswer] = field(default_factory=dict)

    def result(self) -> RdapResult:
        return RdapResult(dict(self.results))


@dataclass
class ScorePartial:
    weights: dict[str, float] | None = None
    scores: dict[str, ScoreDocument] = field(default_factory=dict)

    def result(self) -> ScoreResult:
        return ScoreResult(weights=self.weights, scores=dict(self.scores))


@dataclass
class TrademarkPartial:
    source_available: bool | None = None
    verdicts: dict[str, TrademarkEntry] = field(default_factory=dict)

    def result(self) -> TrademarkResult:
        return TrademarkResult(self.source_available, dict(self.verdicts))


# --- stages 2 and 3 --------------------------------------------------------------------------
def dns_prefilter(candidates: list[str], env: StageEnvironment, partial: DnsPartial) -> None:
    """Keeps the names DNS does not show as registered."""

    def lookup(domain: str) -> DnsAnswer:
        verdict = env.providers.dns.check(domain, env.stop)
        if verdict.canary_failed:
            partial.canary_failed.add(domain)
        return DnsAnswer(verdict.availability, verdict.detail)

    def failed(detail: str) -> DnsAnswer:
        return DnsAnswer(Availability.UNKNOWN, detail)

    guarded = _one_name_only(lookup, failed, "DNS")
    _look_up_all(candidates, guarded, env.dns_concurrency, env, partial.results, "checked")


def rdap_confirm(candidates: list[str], env: StageEnvironment, partial: RdapPartial) -> None:
    """Asks each name's registry; only a 404 (no such domain) confirms availability."""
    stop = StopAtDeadline(env.stop, env.deadline)  # a wait at a rate gate ends with the stage

    def lookup(domain: str) -> RdapAnswer:
        record = env.providers.rdap.lookup(domain, stop)
        return RdapAnswer(
            availability=record.availability,
            detail=record.detail,
            registered_at=record.registered_at,
            expires_at=record.expires_at,
            source=record.source,
        )

    def failed(detail: str) -> RdapAnswer:
        return RdapAnswer(Availability.UNKNOWN, detail)

    guarded = _one_name_only(lookup, failed, "RDAP")
    _look_up_all(candidates, guarded, env.rdap_concurrency, env, partial.results, "confirmed")


def _one_name_only(
    lookup: Callable[[str], A], failed: Callable[[str], A], what: str
) -> Callable[[str], A]:
    """`lookup`, where an unexpected error costs its own name only (see the module's note)."""

    def guarded(domain: str) -> A:
        try:
            return lookup(domain)
        except _NOT_ONE_NAMES_FAILURE:
            raise
        except Exception as error:  # a bad answer, or a bug: this name's loss only
            detail = f"{type(error).__name__}: {error}".splitlines()[0][:200]
            log.warning("%s lookup of %s failed: %s", what, domain, detail)
            log.debug("%s lookup of %s failed", what, domain, exc_info=True)
            return failed(f"lookup failed: {detail}")

    return guarded


def _look_up_all(
    candidates: list[str],
    lookup: Callable[[str], A],
    concurrency: int,
    env: StageEnvironment,
    results: dict[str, A],
    verb: str,
) -> None:
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


def availability_doubt(
    results: Mapping[str, DnsAnswer | RdapAnswer], asked: Sequence[str], canary_failed: bool
) -> str | None:
    """Why an availability stage's answers cannot be taken as a result, or None. No network
    (or a resolver denying everything) must not read as "nothing is free": when a resolver
    failed its canaries, or more than half of the names to register that were asked came back
    unknown, the run is degraded with this reason (ADR 0044)."""
    answered = [results[domain] for domain in asked if domain in results]
    unknown = sum(1 for answer in answered if answer.availability is Availability.UNKNOWN)
    if not answered or not (canary_failed or 2 * unknown > len(answered)):
        return None
    return f"availability could not be checked for {unknown} of {len(answered)} names (no network?)"


# --- stage 4 ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScoringSetup:
    weights: Weights
    config: ScoringConfig
    today: date
    renewal_cost: float | None
    value_model: ValueModel | None = None


def score_candidates(
    candidates: Sequence[Candidate],
    setup: ScoringSetup,
    env: StageEnvironment,
    partial: ScorePartial,
    clock: Callable[[], float],
) -> None:
    """Scores every candidate (signals the data allows; the rest are reallocated); what the
    engine is told about each is `scoring_input`'s, shared with the single-domain appraisal."""
    scores = partial.scores
    keyword_data = env.providers.keyword_data
    comparables = ComparablesIndex(env.providers.comparable_sales, setup.config)
    values: dict[str, Appraisal] = {}
    if setup.value_model is not None:
        valuer = Valuer(setup.value_model, env.providers.comparable_sales)
        unscored = [candidate.domain for candidate in candidates if candidate.domain not in scores]
        values = valuer.appraise(unscored, setup.today)
    for index, candidate in enumerate(candidates):
        domain = candidate.domain
        if domain in scores:
            continue
        if env.stop.is_set():
            return
        if clock() >= env.deadline:
            raise StageIncompleteError(f"{len(scores)} of {len(candidates)} names scored")
        inputs = scoring_input(
            candidate,
            keyword_data,
            comparables,
            setup.today,
            setup.renewal_cost,
            value=values.get(domain),
        )
        scores[domain] = score_one(inputs, setup.weights, setup.config, setup.today).to_dict()
        if index % 100 == 0:
            env.progress(len(scores), len(candidates))
    env.progress(len(scores), len(candidates))


# --- stage 5 ---------------------------------------------------------------------------------
def trademark_check(
    domains: list[str], env: StageEnvironment, partial: TrademarkPartial, clock: Callable[[], float]
) -> None:
    """The gate: no candidate is recommended unless a trademark source cleared it."""
    verdicts = partial.verdicts
    marks = env.providers.trademarks.marks()
    partial.source_available = marks is not None
    gate = TrademarkGate(marks)
    for index, domain in enumerate(domains):
        if domain in verdicts:
            continue
        if env.stop.is_set():
            return
        if clock() >= env.deadline:
            raise StageIncompleteError(f"{len(verdicts)} of {len(domains)} names checked")
        result = gate.check(domain)
        verdicts[domain] = TrademarkEntry(result.verdict, result.matched_mark, result.rule)
        if index % 200 == 0:
            env.progress(len(verdicts), len(domains))
    env.progress(len(verdicts), len(domains))
