"""The orchestrator on a real database with the offline providers (and providers that fail,
stall or stop on purpose): results, degradation, checkpoints and resume, abort, weight sets."""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any

import pytest
from sqlalchemy import Engine, func, select

from dominus.errors import JobAbortedError
from dominus.jobs.backoff import Backoff
from dominus.jobs.clock import utc_now
from dominus.pipeline import runner as runner_module
from dominus.pipeline.model import RunInput, RunStatus, Stage
from dominus.pipeline.runner import PipelineOptions, PipelineRunner
from dominus.pipeline.scoring_sets import weight_sets_of
from dominus.pipeline.store import PipelineStore, RunRecord
from dominus.providers.models import Availability, DnsVerdict, Mark, RdapRecord, StopSignal
from dominus.providers.offline import offline_providers
from dominus.providers.sets import ProviderSet
from dominus.schema.tables import candidates, pipeline_checkpoints, scoring_runs

pytestmark = pytest.mark.backends("sqlite", "postgresql")


INPUT = RunInput(
    keywords=["home gym", "solar panels", "meal prep"],
    brandable=["zentrova", "Zentrova.com", "nikeshoes", "bad..name"],
    closeout=[{"domain": "oldgardentools.com", "age": 12, "backlinks": 300, "wayback": 90}],
)


@pytest.fixture
def runs(engine: Engine, backend: str) -> PipelineStore:
    return PipelineStore(engine)


def start(runs: PipelineStore, run_input: RunInput = INPUT) -> RunRecord:
    return runs.create_run(run_input, "sample", utc_now())


def runner(
    runs: PipelineStore,
    providers: ProviderSet | None = None,
    stop: StopSignal | None = None,
    **options: Any,
) -> PipelineRunner:
    return PipelineRunner(
        runs,
        providers or offline_providers(),
        PipelineOptions(**options),
        clock=utc_now,
        stop=stop or threading.Event(),
    )


class CountingDns:
    """Wraps a DNS checker, counting lookups (and optionally failing or stalling)."""

    def __init__(self, inner: Any, *, fail_times: int = 0, delay: float = 0.0) -> None:
        self.inner = inner
        self.calls = 0
        self.fail_times = fail_times
        self.delay = delay
        self.lock = threading.Lock()

    def check(self, domain: str, stop: StopSignal | None = None) -> DnsVerdict:
        with self.lock:
            self.calls += 1
            failing = self.calls <= self.fail_times
        if failing:
            raise ConnectionError("resolver unreachable")
        time.sleep(self.delay)
        verdict: DnsVerdict = self.inner.check(domain)
        return verdict


class StoppingRdap:
    """Sets the run's stop signal at its first lookup: the run stops inside the RDAP stage."""

    def __init__(self, inner: Any, stop: threading.Event) -> None:
        self.inner = inner
        self.stop = stop

    def lookup(self, domain: str, stop: StopSignal | None = None) -> RdapRecord:
        self.stop.set()
        record: RdapRecord = self.inner.lookup(domain, stop)
        return record


def count(engine: Engine, table: Any, run_id: int) -> int:
    with engine.connect() as connection:
        column = table.c.run_id if "run_id" in table.c else table.c.last_run_id
        return int(connection.execute(select(func.count()).where(column == run_id)).scalar_one())


def test_a_run_on_the_sample_data(runs: PipelineStore, engine: Engine) -> None:
    run = start(runs)
    done = runner(runs).run(run.id)
    assert done.status is RunStatus.COMPLETED
    assert not done.degraded
    summary = done.summary or {}
    assert summary["candidates"] == 6  # 8 inputs: one duplicate (Zentrova.com), one invalid
    assert (summary["invalid"], summary["duplicates"]) == (1, 1)
    assert summary["sample_data"] is True
    assert set(done.stages) == {stage.value for stage in Stage}
    assert all(report["status"] == "completed" for report in done.stages.values())
    scores = runs.run_scores(run.id)
    by_domain = {row["domain"]: row for row in scores}
    assert "solarpanels.com" not in by_domain  # registered per the sample DNS data
    # A closeout name is bought, not registered: RDAP found it registered, it is scored anyway.
    assert by_domain["oldgardentools.com"]["details"]["acquisition"] == "purchase"
    assert by_domain["homegym.com"]["details"]["acquisition"] == "registration"
    assert by_domain["nikeshoes.com"]["trademark_verdict"] == "blocked"
    assert by_domain["nikeshoes.com"]["recommended"] is False
    assert by_domain["homegym.com"]["recommended"] is True
    assert summary["recommended"] == sum(row["recommended"] for row in scores)
    assert count(engine, candidates, run.id) == 6
    assert count(engine, scoring_runs, run.id) == len(scores)
    assert done.weights is not None and done.weight_set_id is None


def test_each_stage_reports_the_candidates_it_handed_on(runs: PipelineStore) -> None:
    """The funnel: a finished stage's report says how many names went in (`total`) and how
    many it passed on (`passed`), and the counts agree with the run's summary."""
    run = start(runs)
    done = runner(runs).run(run.id)
    summary = done.summary or {}
    passed = {stage: report["passed"] for stage, report in done.stages.items()}
    totals = {stage: report["total"] for stage, report in done.stages.items()}
    assert passed["generate"] == summary["candidates"] == 6
    assert passed["dns"] == summary["dns"]["available"]
    # Scoring gets the registrations RDAP confirmed plus the closeout name (bought, not asked).
    assert passed["rdap"] == totals["score"] == summary["scored"]
    assert passed["score"] == totals["trademark"] == summary["scored"]
    assert passed["trademark"] == summary["trademark"]["clear"]
    assert passed["trademark"] < passed["score"]  # nikeshoes.com is blocked
    assert totals["rdap"] == passed["dns"] + summary["purchase_candidates"]


def test_invalid_a_labels_are_refused_not_recommended(runs: PipelineStore) -> None:
    """`xn--a` (punycode that does not decode to a valid label) and `xn--ls8h`
    (the emoji 💩, refused when typed as such) were recommended as `.com` names."""
    run = start(runs, RunInput(brandable=["xn--a", "xn--ls8h", "XN--BCHER-KVA"]))
    done = runner(runs).run(run.id)
    assert done.status is RunStatus.COMPLETED
    assert done.summary is not None
    assert (done.summary["candidates"], done.summary["invalid"]) == (1, 2)
    assert [row["domain"] for row in runs.run_scores(run.id)] == ["xn--bcher-kva.com"]
    invalid = runs.checkpoints(run.id)[Stage.GENERATE]["invalid"]
    assert [entry["input"] for entry in invalid] == ["xn--a", "xn--ls8h"]
    for entry in invalid:
        assert entry["reason"].startswith(f"label {entry['input']!r} is not a valid A-label")


def test_without_a_trademark_source_nothing_is_recommended(runs: PipelineStore) -> None:
    class NoMarks:
        def marks(self) -> list[Mark] | None:
            return None

    providers = dataclasses.replace(offline_providers(), trademarks=NoMarks())
    run = start(runs)
    runner(runs, providers).run(run.id)
    scores = runs.run_scores(run.id)
    assert scores
    assert {row["trademark_verdict"] for row in scores} == {"unverified"}
    assert not any(row["recommended"] for row in scores)


def test_transient_errors_are_retried(runs: PipelineStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner_module, "STAGE_RETRY_BACKOFF", Backoff(0.01, jitter=0.2))
    dns = CountingDns(offline_providers().dns, fail_times=2)
    providers = dataclasses.replace(offline_providers(), dns=dns)
    run = start(runs)
    done = runner(runs, providers, dns_concurrency=1).run(run.id)
    assert not done.degraded, done.degraded_reasons
    assert done.summary and done.summary["recommended"] > 0


def test_a_stage_that_keeps_failing_degrades_the_run_which_goes_on(
    runs: PipelineStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner_module, "STAGE_RETRY_BACKOFF", Backoff(0.01, max_seconds=0.01))
    dns = CountingDns(offline_providers().dns, fail_times=10**6)
    providers = dataclasses.replace(offline_providers(), dns=dns)
    run = start(runs)
    done = runner(runs, providers, dns_concurrency=1).run(run.id)
    assert done.status is RunStatus.COMPLETED
    assert done.degraded
    [reason] = done.degraded_reasons
    assert reason.startswith("dns: still failing after 4 attempts")
    assert done.stages["dns"]["status"] == "degraded"
    assert done.stages["trademark"]["status"] == "completed"
    # Conservative: names DNS could not check do not pass; only the closeout name, which DNS
    # does not decide (it is bought, not registered), reaches scoring.
    assert done.summary and done.summary["dns"]["unchecked"] == 5
    assert [row["domain"] for row in runs.run_scores(run.id)] == ["oldgardentools.com"]


def test_a_stage_over_its_time_budget_keeps_its_partial_results(runs: PipelineStore) -> None:
    dns = CountingDns(offline_providers().dns, delay=0.3)
    providers = dataclasses.replace(offline_providers(), dns=dns)
    run = start(runs)
    done = runner(
        runs,
        providers,
        dns_concurrency=1,
        budget_base_seconds=0.5,
        budget_per_candidate_seconds=0,
    ).run(run.id)
    assert done.degraded
    assert "dns: time budget of 0.5 s exceeded" in done.degraded_reasons[0]
    summary = done.summary or {}
    checked = 6 - summary["dns"]["unchecked"]
    assert 0 < checked < 6, summary
    assert summary["scored"] <= checked


def test_a_stopped_run_resumes_at_its_first_unfinished_stage(
    runs: PipelineStore, engine: Engine
) -> None:
    stop = threading.Event()
    first_dns = CountingDns(offline_providers().dns)
    stopping = dataclasses.replace(
        offline_providers(), dns=first_dns, rdap=StoppingRdap(offline_providers().rdap, stop)
    )
    run = start(runs)
    with pytest.raises(JobAbortedError):
        runner(runs, stopping, stop=stop).run(run.id)
    # The stage that was stopped midway is not checkpointed; the ones before it are.
    assert set(runs.checkpoints(run.id)) == {Stage.GENERATE, Stage.DNS}
    assert first_dns.calls == 5  # every name but the closeout one, which DNS does not decide

    second_dns = CountingDns(offline_providers().dns)
    resumed = dataclasses.replace(offline_providers(), dns=second_dns)
    done = runner(runs, resumed).run(run.id)
    assert second_dns.calls == 0  # DNS was not redone
    assert done.status is RunStatus.COMPLETED
    assert done.summary and done.summary["recommended"] > 0
    with engine.connect() as connection:
        stages = connection.execute(
            select(pipeline_checkpoints.c.stage).where(pipeline_checkpoints.c.run_id == run.id)
        ).scalars()
        assert set(stages) == {stage.value for stage in Stage}


def test_a_run_stopped_mid_stage_raises_at_once(runs: PipelineStore) -> None:
    stop = threading.Event()
    dns = CountingDns(offline_providers().dns, delay=0.05)

    class StopAfterTwo:
        def check(self, domain: str, signal: StopSignal | None = None) -> DnsVerdict:
            if dns.calls >= 2:
                stop.set()
            return dns.check(domain)

    providers = dataclasses.replace(offline_providers(), dns=StopAfterTwo())
    run = start(runs)
    with pytest.raises(JobAbortedError):
        runner(runs, providers, stop=stop, dns_concurrency=1).run(run.id)
    assert dns.calls < 6
    assert set(runs.checkpoints(run.id)) == {Stage.GENERATE}


def test_the_active_weight_set_applies_without_a_restart(runs: PipelineStore) -> None:
    first = start(runs)
    runner(runs).run(first.id)
    weights = {"intrinsic": 0.7, "commercial": 0.1, "market": 0.1, "expiry": 0.1}
    set_id = weight_sets_of(runs.engine).add("tuned-1", weights, "tuned", utc_now())
    second = start(runs)
    done = runner(runs).run(second.id)
    assert done.weight_set_id == set_id
    assert done.weights == weights
    before = {row["domain"]: row["weighted_score"] for row in runs.run_scores(first.id)}
    after = {row["domain"]: row["weighted_score"] for row in runs.run_scores(second.id)}
    assert before.keys() == after.keys()
    assert before != after


def test_unknown_availability_does_not_pass(runs: PipelineStore) -> None:
    class Unknown:
        def check(self, domain: str, stop: StopSignal | None = None) -> DnsVerdict:
            return DnsVerdict(domain, Availability.UNKNOWN, "timeout")

    providers = dataclasses.replace(offline_providers(), dns=Unknown())
    run = start(runs)
    done = runner(runs, providers).run(run.id)
    assert done.summary and done.summary["dns"]["unknown"] == 5
    assert [row["domain"] for row in runs.run_scores(run.id)] == ["oldgardentools.com"]
    # Not one name to register could be checked: no network, not "nothing is free".
    assert done.degraded_reasons == [
        "dns: availability could not be checked for 5 of 5 names (no network?)"
    ]


def test_a_few_unknown_names_do_not_degrade_the_run(runs: PipelineStore) -> None:
    sample = offline_providers()
    unknown = {"homegym.com", "zentrova.com"}  # 2 of the 5 names to register

    class SomeUnknown:
        def check(self, domain: str, stop: StopSignal | None = None) -> DnsVerdict:
            if domain in unknown:
                return DnsVerdict(domain, Availability.UNKNOWN, "timeout")
            return sample.dns.check(domain, stop)

    providers = dataclasses.replace(sample, dns=SomeUnknown())
    done = runner(runs, providers).run(start(runs).id)
    assert done.summary and done.summary["dns"]["unknown"] == 2
    assert not done.degraded, done.degraded_reasons


@pytest.mark.parametrize("size", [0, 1])
def test_results_are_written_again_without_duplicates(
    runs: PipelineStore, engine: Engine, size: int
) -> None:
    """Saving a run's results twice (a retried job) replaces them."""
    run = start(runs)
    runner_instance = runner(runs)
    runner_instance.run(run.id)
    scored = count(engine, scoring_runs, run.id)
    for _ in range(size):
        runner_instance.run(run.id)  # every stage is checkpointed: only the results are redone
    assert count(engine, scoring_runs, run.id) == scored
    assert count(engine, candidates, run.id) == 6


def test_progress_is_reported_for_every_stage(runs: PipelineStore) -> None:
    seen: list[tuple[str, int, int, int]] = []
    run = start(runs)
    instance = runner(runs)
    instance.on_progress = lambda stage, number, done, total: seen.append(
        (stage.value, number, done, total)
    )
    instance.run(run.id)
    assert next(stage for stage, *_ in seen) == "generate"
    assert {stage for stage, *_ in seen} == {stage.value for stage in Stage}
    last: dict[str, tuple[int, int]] = {}
    for stage, _number, done, total in seen:
        last[stage] = (done, total)
    assert all(done == total for done, total in last.values() if total), last
