"""PORTFOLIO_RESCORE: appraise held names again and refresh their verdicts.

Each name is appraised exactly as `dominus score NAME` appraises it (the single-domain
appraisal: stage 1's candidate, the active weights, the settings' providers, the trademark gate;
ADR 0018), at most PORTFOLIO_RESCORE_CONCURRENCY at a time. A name's new score and suggested
list price are written as soon as it is appraised, on the one-domain path and the all-domains
path alike. A name whose appraisal fails keeps its previous score (nothing is written for it,
never a 0) and is listed in the result's errors. Then the verdicts are refreshed (the renewal
clock moves even when no score does). The stop signal ends it early: names appraised by then
keep their new scores."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine

from dominus.domain_names import InvalidNameError, normalise_domain
from dominus.errors import DominusError, JobAbortedError
from dominus.jobs.clock import Clock
from dominus.pipeline.appraisal import AppraisalInputError, Appraiser, ValidName, appraiser
from dominus.pipeline.appraisal_result import Appraisal
from dominus.pipeline.concurrency import bounded_map
from dominus.pipeline.store import PipelineStore
from dominus.portfolio.model import EntryNotFoundError, ScoreUpdate
from dominus.portfolio.service import PortfolioService
from dominus.portfolio.settings import PortfolioSettings
from dominus.providers.models import StopSignal
from dominus.providers.rate_gate import RateGate

# (domain) → its fresh score; raises when the name cannot be appraised now.
ScoreOne = Callable[[str], ScoreUpdate]
# (domain, done, total) after each name.
OnProgress = Callable[[str, int, int], None]


def score_update(appraisal: Appraisal) -> ScoreUpdate:
    """What the portfolio keeps of an appraisal: the score on 0–100, EV, confidence, suggested
    list price, and the final tier (trademark gate applied) with its reason."""
    score = appraisal.score
    tier, reason = appraisal.decision
    return ScoreUpdate(
        current_score=round(score.weighted_score * 100, 2),
        expected_value=score.expected_value,
        confidence=score.confidence,
        suggested_list_price=score.suggested_list_price,
        details={
            "tier": tier.value,
            "tier_reason": reason,
            "trademark": appraisal.trademark.to_dict(),
            "currency": score.currency,
            "weights": appraisal.weights.to_dict(),
            "providers": appraisal.providers,
            "sample_data": appraisal.sample_data,
            "appraised_on": appraisal.appraised_on.isoformat(),
        },
    )


def appraiser_scorer(appraiser: Appraiser) -> ScoreOne:
    def score_one(domain: str) -> ScoreUpdate:
        try:
            name = normalise_domain(domain)
        except InvalidNameError as error:
            raise AppraisalInputError(f"invalid domain {domain!r}: {error}") from None
        return score_update(appraiser.appraise(ValidName(name, None)))

    return score_one


def describe_error(error: Exception) -> str:
    if isinstance(error, DominusError):
        return error.message
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


@dataclass
class _Outcome:
    score: ScoreUpdate | None = None
    error: str | None = None
    changed: bool = False


# The names a PORTFOLIO_RESCORE result had before results took snake_case ones (ADR 0041): a
# result stored then is read with today's names.
_EARLIER_NAMES = {"verdictChanges": "verdict_changes", "totalDurationMs": "total_duration_ms"}


def stored_result(result: Mapping[str, Any]) -> dict[str, Any]:
    """A stored PORTFOLIO_RESCORE result with today's names, whenever it was stored."""
    return {_EARLIER_NAMES.get(key, key): value for key, value in result.items()}


@dataclass
class RescoreResult:
    rescored: int = 0
    unchanged: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)
    verdict_changes: list[dict[str, Any]] = field(default_factory=list)
    total_duration_ms: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "rescored": self.rescored,
            "unchanged": self.unchanged,
            "errors": self.errors,
            "verdict_changes": self.verdict_changes,
            "total_duration_ms": self.total_duration_ms,
        }


class Rescorer:
    def __init__(
        self,
        service: PortfolioService,
        score_one: ScoreOne,
        clock: Clock,
        *,
        concurrency: int,
        stop: StopSignal,
        on_progress: OnProgress | None = None,
    ) -> None:
        self.service = service
        self.score_one = score_one
        self.clock = clock
        self.concurrency = concurrency
        self.stop = stop
        self.on_progress = on_progress
        self._lock = threading.Lock()
        self._done = 0

    def run(self, domain: str | None = None) -> RescoreResult:
        """Rescore `domain` (an active entry) or every active entry. JobAbortedError when the
        stop signal ends it before every name was appraised."""
        started = time.monotonic()
        if domain is not None:
            entry = self.service.get(domain)
            if entry.status != "active":
                raise EntryNotFoundError(entry.domain)
            domains = [entry.domain]
        else:
            domains = [entry.domain for entry in self.service.entries()]
        results: dict[str, _Outcome] = {}
        total = len(domains)
        lookups = bounded_map(
            domains,
            lambda name: self._rescore(name, total),
            concurrency=self.concurrency,
            stop=self.stop,
            deadline=math.inf,
            on_done=lambda _done: None,
            results=results,
        )
        if not lookups.complete:
            raise JobAbortedError(
                f"rescore stopped after {len(results)} of {total} names (their scores are kept)"
            )
        result = RescoreResult()
        for name in domains:
            outcome = results[name]
            if outcome.error is not None:
                result.errors.append({"domain": name, "error": outcome.error})
            elif outcome.changed:
                result.rescored += 1
            else:
                result.unchanged += 1
        changes = self.service.refresh_verdicts(self.clock(), None if domain is None else domains)
        result.verdict_changes = [change.to_dict() for change in changes]
        result.total_duration_ms = round((time.monotonic() - started) * 1000)
        return result

    def _rescore(self, domain: str, total: int) -> _Outcome:
        outcome = _Outcome()
        try:
            outcome.score = self.score_one(domain)
        except Exception as error:  # noqa: BLE001 - any provider failure: keep the old score
            outcome.error = describe_error(error)
        if outcome.score is not None:
            with self._lock:  # one writer at a time (SQLite has one anyway)
                outcome.changed = self.service.store_score(domain, outcome.score, self.clock())
        with self._lock:
            self._done += 1
            done = self._done
        if self.on_progress is not None:
            self.on_progress(domain, done, total)
        return outcome


def rescore_dedupe_key(domain: str | None) -> str:
    """One PORTFOLIO_RESCORE job pending per name (or for every name) at a time."""
    return f"portfolio-rescore:{domain or '*'}"


def rescore(
    settings: PortfolioSettings,
    engine: Engine,
    clock: Clock,
    domain: str | None,
    *,
    stop: StopSignal,
    on_progress: OnProgress | None = None,
    gate: RateGate | None = None,
) -> RescoreResult:
    """Rescore `domain` (or every active entry) with the settings' providers and scoring, as
    the PORTFOLIO_RESCORE job and `portfolio rescore --sync` both do; RDAP and WHOIS requests
    wait at `gate` (default: one of the rescore's own)."""
    service = PortfolioService(engine, settings)
    today = clock().date()
    with appraiser(settings, PipelineStore(engine), today, stop=stop, gate=gate) as names:
        rescorer = Rescorer(
            service,
            appraiser_scorer(names),
            clock,
            concurrency=settings.PORTFOLIO_RESCORE_CONCURRENCY,
            stop=stop,
            on_progress=on_progress,
        )
        return rescorer.run(domain)
