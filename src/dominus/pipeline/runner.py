"""The orchestrator: runs the five stages in order, checkpointing each, so a run whose worker
died resumes at the first unfinished stage when its job is retried.

A stage's transient errors are retried (1 s, 2 s, 4 s, ± 20 %). A stage that still fails, or
runs out of its time budget (`base + per candidate`, capped), marks the run *degraded* with the
reason; what it did is kept and the run goes on with it. Everything stays conservative: a name
that was not checked does not pass, a name the gate did not clear is not recommended."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from dominus.errors import ClaimLostError, JobAbortedError
from dominus.jobs.backoff import Backoff
from dominus.pipeline.generate import generate_candidates
from dominus.pipeline.model import STAGES, Stage
from dominus.pipeline.results import assemble_results
from dominus.pipeline.scoring_sets import weight_sets_of, with_active_thresholds
from dominus.pipeline.stage_results import Candidate, GenerateResult, RunState, StageResult
from dominus.pipeline.stages import (
    TRANSIENT_ERRORS,
    DnsPartial,
    RdapPartial,
    ScorePartial,
    ScoringSetup,
    StageEnvironment,
    StageIncompleteError,
    TrademarkPartial,
    availability_doubt,
    dns_prefilter,
    rdap_confirm,
    score_candidates,
    trademark_check,
)
from dominus.pipeline.store import PipelineStore, RunRecord
from dominus.pipeline.tiers import OVER_BUDGET
from dominus.pipeline.trademark_gate import TrademarkVerdict
from dominus.providers.models import StopSignal
from dominus.providers.sets import ProviderSet
from dominus.scoring import ScoringConfig, Weights
from dominus.valuation import ValueModel, load_model

log = logging.getLogger("dominus.pipeline")

# A stage that fails transiently runs again up to STAGE_RETRIES times, after 1 s, 2 s and 4 s
# (each ± 20 %); the retry count bounds the waits, so the curve has no cap.
STAGE_RETRIES = 3
STAGE_RETRY_BACKOFF = Backoff(base_seconds=1.0, jitter=0.2)


@dataclass(frozen=True)
class PipelineOptions:
    default_tld: str = "com"
    dns_concurrency: int = 16
    rdap_concurrency: int = 4
    budget_base_seconds: float = 30.0
    budget_per_candidate_seconds: float = 0.2
    budget_max_seconds: float = 3600.0
    renewal_cost: float | None = None
    scoring: ScoringConfig = field(default_factory=ScoringConfig)
    # The value model (wholesale and retail ranges): the bundled one unless given; None: EV
    # from the anchor formula (scoring/value.py).
    value_model: ValueModel | None = field(default_factory=load_model)

    def budget_seconds(self, candidates: int) -> float:
        base = self.budget_base_seconds + self.budget_per_candidate_seconds * candidates
        return min(self.budget_max_seconds, base)


# (stage, stage number, done, total)
ProgressCallback = Callable[[Stage, int, int, int], None]


@dataclass(frozen=True)
class StageTask:
    """One stage's work, and what it has done so far: `result()` is the stage's result whether
    `work` finished, stopped early or failed (a retry calls `work` again, which skips what is
    already done)."""

    work: Callable[[], object]
    result: Callable[[], StageResult]
    # Why what it did cannot be taken as a result although it ran (availability unchecked).
    doubt: Callable[[], str | None] = lambda: None


class PipelineRunner:
    def __init__(
        self,
        store: PipelineStore,
        providers: ProviderSet,
        options: PipelineOptions,
        *,
        clock: Callable[[], datetime],
        stop: StopSignal,
        on_progress: ProgressCallback | None = None,
    ) -> None:
        self.store = store
        self.providers = providers
        self.options = options
        self.clock = clock
        self.stop = stop
        self.on_progress = on_progress or (lambda *_: None)

    def run(self, run_id: int) -> RunRecord:
        """Run (or resume) the run to its end; raises JobAbortedError when stopped."""
        run = self.store.start_run(run_id, self.clock())
        state = RunState.from_checkpoints(self.store.checkpoints(run_id))
        if state.finished():
            done = ", ".join(stage.value for stage in state.finished())
            log.info("run %s: resuming after %s", run_id, done)
        for number, stage in enumerate(STAGES, start=1):
            if stage in state:
                continue
            self._raise_if_stopped()
            result, report, reason = self._run_stage(run, stage, number, state)
            self._raise_if_stopped()  # a stage stopped midway is not complete: no checkpoint
            state.record(stage, result)
            report["passed"] = _passed_on(stage, state)  # the funnel's "out" for this stage
            self.store.complete_stage(run_id, stage, result.to_json(), report, reason, self.clock())
        reports = self.store.get_run(run_id).stages  # why a stage left names unchecked
        candidate_rows, score_rows, summary = assemble_results(state, self.providers, reports)
        self._raise_if_stopped()
        return self.store.complete_run(run_id, candidate_rows, score_rows, summary, self.clock())

    # --- one stage ---------------------------------------------------------------------------
    def _run_stage(
        self, run: RunRecord, stage: Stage, number: int, state: RunState
    ) -> tuple[StageResult, dict[str, Any], str | None]:
        total = self._stage_size(run, stage, state)
        budget = self.options.budget_seconds(total)
        started = self.clock()
        report: dict[str, Any] = {"status": "running", "started_at": started.isoformat()}
        report["total"] = total
        self.store.report_stage(run.id, stage, report)
        self.on_progress(stage, number, 0, total)
        env = StageEnvironment(
            providers=self.providers,
            stop=self.stop,
            deadline=time.monotonic() + budget,
            progress=lambda done, of: self.on_progress(stage, number, done, of),
            dns_concurrency=self.options.dns_concurrency,
            rdap_concurrency=self.options.rdap_concurrency,
        )
        task = self._stage_task(run, stage, state, env)
        reason = _joined(self._attempt_stage(run, stage, task, env, budget), task, stage)
        if reason is None and not self.stop.is_set():
            self.on_progress(stage, number, total, total)
        report |= {
            "status": "degraded" if reason else "completed",
            "finished_at": self.clock().isoformat(),
            "seconds": round((self.clock() - started).total_seconds(), 3),
            "budget_seconds": round(budget, 3),
        }
        if reason:
            report["reason"] = reason
        return task.result(), report, reason

    def _attempt_stage(
        self, run: RunRecord, stage: Stage, task: StageTask, env: StageEnvironment, budget: float
    ) -> str | None:
        """Runs the stage with retries; returns the degradation reason, or None."""
        for attempt in range(STAGE_RETRIES + 1):
            try:
                task.work()
                return None
            except StageIncompleteError as error:
                return f"{stage.value}: {OVER_BUDGET} of {budget:g} s exceeded ({error})"
            except (JobAbortedError, ClaimLostError):
                raise  # stopped, or another attempt owns the run now: not a degradation
            except TRANSIENT_ERRORS as error:
                if attempt == STAGE_RETRIES or time.monotonic() >= env.deadline:
                    return f"{stage.value}: still failing after {attempt + 1} attempts: {error}"
                delay = STAGE_RETRY_BACKOFF.delay(failures=attempt + 1)
                log.warning(
                    "run %s: %s failed (%s); retrying in %.1f s", run.id, stage, error, delay
                )
                if self.stop.wait(delay):
                    return None  # the caller sees the stop signal
            except Exception as error:  # a failed stage degrades the run; it does not end it
                log.exception("run %s: stage %s failed", run.id, stage.value)
                return f"{stage.value}: failed: {type(error).__name__}: {error}"
        return None  # not reached

    def _stage_task(
        self, run: RunRecord, stage: Stage, state: RunState, env: StageEnvironment
    ) -> StageTask:
        monotonic = time.monotonic
        if stage is Stage.GENERATE:
            generated: list[GenerateResult] = []

            def generate() -> None:
                generated.append(generate_candidates(run.run_input, self.options.default_tld))

            return StageTask(generate, lambda: generated[-1] if generated else GenerateResult())
        if stage is Stage.DNS:
            dns = DnsPartial()
            registrations = state.generate.registrations()
            return StageTask(
                lambda: dns_prefilter(registrations, env, dns),
                dns.result,
                lambda: availability_doubt(dns.results, registrations, bool(dns.canary_failed)),
            )
        if stage is Stage.RDAP:
            rdap = RdapPartial()
            # Only the names to register count: a listed name's answer decides nothing.
            return StageTask(
                lambda: rdap_confirm(_rdap_input(state), env, rdap),
                rdap.result,
                lambda: availability_doubt(rdap.results, _dns_passed(state), False),
            )
        if stage is Stage.SCORE:
            scoring = ScorePartial()

            def score() -> None:
                setup = self._scoring_setup(run)
                scoring.weights = setup.weights.to_dict()
                score_candidates(_to_score(state), setup, env, scoring, monotonic)

            return StageTask(score, scoring.result)
        marks = TrademarkPartial()
        scored = list(state.score.scores)
        return StageTask(lambda: trademark_check(scored, env, marks, monotonic), marks.result)

    def _scoring_setup(self, run: RunRecord) -> ScoringSetup:
        """The active weight set and calibrated thresholds, read now: a newly tuned set applies to
        the next scoring stage without a restart."""
        active = weight_sets_of(self.store.engine).active()
        weights = Weights.from_dict(active.values) if active else Weights()
        weights.validate()
        self.store.set_weights(run.id, active.id if active else None, weights.to_dict())
        return ScoringSetup(
            weights=weights,
            config=with_active_thresholds(self.store.engine, self.options.scoring),
            today=self._today(),
            renewal_cost=self.options.renewal_cost,
            value_model=self.options.value_model,
        )

    def _today(self) -> date:
        return self.clock().date()

    def _stage_size(self, run: RunRecord, stage: Stage, state: RunState) -> int:
        if stage is Stage.GENERATE:
            return run.run_input.size()
        if stage is Stage.DNS:
            return len(state.generate.registrations())
        if stage is Stage.RDAP:
            return len(_rdap_input(state))
        if stage is Stage.SCORE:
            return len(_to_score(state))
        return len(state.score.scores)

    def _raise_if_stopped(self) -> None:
        if self.stop.is_set():
            raise JobAbortedError("pipeline run stopped")


def _joined(reason: str | None, task: StageTask, stage: Stage) -> str | None:
    """The stage's degradation reason: its failure or overrun, and its doubt, if any."""
    doubt = task.doubt()
    reasons = [reason, f"{stage.value}: {doubt}" if doubt else None]
    return "; ".join(part for part in reasons if part) or None


# Hand-registrations must pass both availability stages. Purchase candidates (closeout and
# auction listings) are registered by definition: DNS, which can only say "registered", is not
# asked; RDAP is asked after every hand-registration (its dates are worth showing, its verdict
# decides nothing for them, and a budget running out then costs no decision); both go on to
# scoring whatever the answers (ADR 0016).
def _dns_passed(state: RunState) -> list[str]:
    return state.dns.available(state.generate.registrations())


def _rdap_input(state: RunState) -> list[str]:
    return _dns_passed(state) + state.generate.purchases()


def _passed_on(stage: Stage, state: RunState) -> int:
    """How many candidates a finished stage handed on: valid names (generate), names DNS found
    unregistered, names going to scoring (purchases, and registrations RDAP confirmed), names
    scored, names the trademark gate cleared."""
    if stage is Stage.GENERATE:
        return len(state.generate.candidates)
    if stage is Stage.DNS:
        return len(_dns_passed(state))
    if stage is Stage.RDAP:
        return len(_to_score(state))
    if stage is Stage.SCORE:
        return len(state.score.scores)
    verdicts = state.trademark.verdicts.values()
    return sum(1 for entry in verdicts if entry.verdict is TrademarkVerdict.CLEAR)


def _to_score(state: RunState) -> list[Candidate]:
    confirmed = set(state.rdap.available(_dns_passed(state)))
    return [c for c in state.generate.candidates if c.purchase or c.domain in confirmed]
