"""Outcomes enqueue one BACKTEST_BUILD; WEIGHT_TUNE applies a weight set that the next pipeline
run of the same process scores with; rollbacks of weights and thresholds; on both backends."""

from __future__ import annotations

import threading
from datetime import UTC, date, datetime

import pytest
from sqlalchemy import Engine, insert, select

from dominus.backtest.build_queue import BACKTEST_BUILD, WEIGHT_TUNE
from dominus.config import Settings
from dominus.handlers import HandlerDependencies, build_registry
from dominus.jobs.client import JobQueue
from dominus.jobs.sql import SqlJobStore
from dominus.jobs.worker import Worker
from dominus.jobs.worker_config import WorkerConfig
from dominus.pipeline.model import RunInput
from dominus.pipeline.runner import PipelineOptions, PipelineRunner
from dominus.pipeline.store import PipelineStore
from dominus.providers.offline import offline_providers
from dominus.schema.tables import backtest_signals, job_queue, outcomes, weight_tunes
from dominus.scoring.weights import Weights
from tests.support.backtest_records import NOW, sale, service
from tests.support.draining import drain

pytestmark = pytest.mark.backends("sqlite", "postgresql")


DAY = date(2026, 5, 10)


def queue_of(settings: Settings, engine: Engine) -> JobQueue:
    registry = build_registry(
        diagnostic_jobs=False, dependencies=HandlerDependencies(settings, engine, lambda: NOW)
    )
    return JobQueue(SqlJobStore(engine), registry, clock=lambda: NOW)


def builds(engine: Engine) -> list[tuple[int, str, str | None]]:
    query = (
        select(job_queue.c.id, job_queue.c.status, job_queue.c.dedupe_key)
        .where(job_queue.c.job_type == BACKTEST_BUILD)
        .order_by(job_queue.c.id)
    )
    with engine.connect() as connection:
        return [tuple(row) for row in connection.execute(query)]


def test_sales_enqueue_one_build_while_one_is_pending(
    settings: Settings, engine: Engine, backend: str
) -> None:
    queue = queue_of(settings, engine)
    backtest = service(settings, engine, queue)
    first = backtest.record([sale("cloudnest.com", 900.0, DAY)])
    second = backtest.record([sale("bluepath.io", 400.0, DAY)])
    dropped = backtest.record([sale("gone.com", None, DAY).model_copy(update={"type": "dropped"})])
    assert (first.build_created, second.build_created) == (True, False)
    assert second.build_job_id == first.build_job_id
    assert dropped.build_job_id is None
    assert len(builds(engine)) == 1
    # Running now (it may have read the outcomes already): the next sale gets one follow-up.
    claimed = queue.store.claim("test-worker", [BACKTEST_BUILD], 1, NOW)
    assert [job.id for job in claimed] == [first.build_job_id]
    third = backtest.record([sale("thirdname.com", 300.0, DAY)])
    fourth = backtest.record([sale("fourthname.com", 300.0, DAY)])
    assert third.build_created and not fourth.build_created
    assert third.build_job_id == fourth.build_job_id != first.build_job_id
    assert builds(engine)[-1][2] == f"backtest-build:after:{first.build_job_id}"
    assert len(builds(engine)) == 2


def seed_signals(engine: Engine, count: int = 20) -> None:
    """Sales where a higher expiry weight lowers the error: names with a high expiry signal sold
    above their EV, names with a low one below it (only intrinsic and expiry have evidence)."""
    rows = []
    with engine.begin() as connection:
        for index in range(count * 2):
            high = index < count
            outcome_id = connection.execute(
                insert(outcomes)
                .values(
                    domain=f"name{index}.com",
                    type="sold",
                    sale_price=2000.0 if high else 500.0,
                    currency="USD",
                    date=DAY,
                    created_at=NOW,
                )
                .returning(outcomes.c.id)
            ).scalar_one()
            rows.append(
                {
                    "outcome_id": outcome_id,
                    "scoring_id": 1000 + index,
                    "run_id": 1,
                    "domain": f"name{index}.com",
                    "sale_date": DAY,
                    "scored_at": datetime(2026, 5, 1, tzinfo=UTC),
                    "realised_price": 2000.0 if high else 500.0,
                    "currency": "USD",
                    "predicted_value": 1000.0,
                    "buy_max": 0.0,
                    "confidence": 0.35,
                    "confidence_bucket": "mid",
                    "weighted_score": 0.5,
                    "intrinsic": 0.5,
                    "expiry": 0.8 if high else 0.1,
                    "recommended": False,
                    "absolute_error": 0.0,
                    "signed_error": 0.0,
                    "baseline_sales": 0,
                    "inputs": {"anchors": {"expiry": 3000.0}},
                    "created_at": NOW,
                }
            )
        connection.execute(insert(backtest_signals), rows)


def test_an_applied_tune_is_used_by_the_next_run_without_a_restart(
    settings: Settings, engine: Engine, backend: str
) -> None:
    runs = PipelineStore(engine)
    runner = PipelineRunner(
        runs,
        offline_providers(),
        PipelineOptions(),
        clock=lambda: NOW,
        stop=threading.Event(),
    )
    run_input = RunInput(brandable=["zentrova", "cloudnest"])
    before = runner.run(runs.create_run(run_input, "sample", NOW).id)
    assert before.weights == Weights().to_dict()
    seed_signals(engine)
    backtest = service(settings, engine)
    dry = backtest.tune(dry_run=True, origin="test")
    assert (dry.safety_passed, dry.applied) == (True, False)
    assert dry.decision == "not applied: dry run"
    assert backtest.store.weights.active() is None
    tuned = backtest.tune(dry_run=False, origin="test")
    assert (tuned.safety_passed, tuned.applied) == (True, True)
    assert tuned.error_suggested is not None and tuned.error_current is not None
    assert tuned.error_suggested < tuned.error_current
    after = tuned.suggestion.after.to_dict()
    assert after["expiry"] == pytest.approx(0.12 / 1.02)
    # the same runner, no restart: its next run scores with the tuned set
    next_run = runner.run(runs.create_run(run_input, "sample", NOW).id)
    assert next_run.weight_set_id == tuned.weight_set_id
    assert next_run.weights == after
    with engine.connect() as connection:
        decisions = list(
            connection.execute(select(weight_tunes.c.applied).order_by(weight_tunes.c.id))
        )
    assert [row.applied for row in decisions] == [False, True]


def test_rollback_activates_a_copy_of_an_earlier_version(
    settings: Settings, engine: Engine, backend: str
) -> None:
    backtest = service(settings, engine)
    sets = backtest.store.weights
    first = sets.add(
        "manual", {"intrinsic": 0.4, "commercial": 0.3, "market": 0.2, "expiry": 0.1}, "manual", NOW
    )
    sets.add("tuned", Weights().to_dict(), "tuned", NOW)
    copy = sets.rollback(first, NOW)
    active = sets.active()
    assert active is not None and active.id == copy != first
    assert active.values == sets.get(first).values
    assert [row.id for row in sets.history()][:1] == [copy]
    assert backtest.weights_in_force().weights["intrinsic"] == pytest.approx(0.4)


def test_calibrated_thresholds_override_the_settings_until_rolled_back(
    settings: Settings, engine: Engine, backend: str
) -> None:
    backtest = service(settings, engine)
    thresholds = backtest.store.thresholds
    assert backtest.config().score_threshold_base == 0.20
    applied = thresholds.add(
        "calibrated",
        {
            "score_threshold_base": 0.35,
            "confidence_threshold_base": 0.1,
            "annual_sell_through": 0.02,
        },
        "calibrated",
        NOW,
    )
    config = backtest.config()
    assert (config.score_threshold_base, config.annual_sell_through) == (0.35, 0.02)
    runs = PipelineStore(engine)
    runner = PipelineRunner(
        runs, offline_providers(), PipelineOptions(), clock=lambda: NOW, stop=threading.Event()
    )
    runner.run(runs.create_run(RunInput(brandable=["zentrova"]), "sample", NOW).id)
    [score] = runs.run_scores(1)
    ratio = score["details"]["coverage_ratio"]
    assert score["details"]["score_threshold"] == pytest.approx(0.35 + 0.20 * ratio)
    defaults = thresholds.add("defaults", {}, "default", NOW)
    assert backtest.config().score_threshold_base == 0.20
    thresholds.rollback(applied, NOW)
    assert backtest.config().score_threshold_base == 0.35
    assert defaults != applied


def test_the_job_types_run_through_the_engine(
    settings: Settings, engine: Engine, backend: str
) -> None:
    queue = queue_of(settings, engine)
    seed_signals(engine)
    build = queue.enqueue_job(BACKTEST_BUILD, {"minSampleSize": 5}).job_id
    tune = queue.enqueue_job(WEIGHT_TUNE, {}).job_id
    worker = Worker(queue.store, queue.registry, WorkerConfig(concurrency=1), clock=lambda: NOW)
    drain(worker, clock=lambda: NOW)
    built = queue.get(build)
    assert built.status.value == "completed", built.last_error
    assert built.result is not None
    assert set(built.result) >= {"signals_built", "new_signals", "report", "suggestion"}
    assert built.result["report"]["sample_size"] == 40
    tuned = queue.get(tune)
    assert tuned.status.value == "completed", tuned.last_error
    assert tuned.result is not None
    assert {k: tuned.result[k] for k in ("sample_size", "applied", "dry_run", "safety_passed")} == {
        "sample_size": 40,
        "applied": False,  # AUTO_TUNE_DRY_RUN is true by default
        "dry_run": True,
        "safety_passed": True,
    }
    assert tuned.result["failures"] == []
    assert set(tuned.result) >= {"weights_before", "weights_after"}
