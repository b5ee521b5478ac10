"""The bundled SAMPLE outcomes (240 invented sales, USD) and the demo that makes them a backtest
offline: import the sales, score their names with the offline providers as of the day before the
first invented sale (as closeout listings, from a second invented file), and build the snapshot.

Every invented sale carries the note SAMPLE_NOTE; the files say SAMPLE DATA in their header. The
scoring date is after every sample comparable sale, so no score sees a sale from its future."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from dominus.backtest.service import BacktestService
from dominus.db.errors import database_errors
from dominus.pipeline.closeout_csv import read_closeout_csv
from dominus.pipeline.model import RunInput
from dominus.pipeline.runner import PipelineRunner
from dominus.pipeline.settings import pipeline_options
from dominus.pipeline.store import PipelineStore
from dominus.providers.setup import SAMPLE, open_providers
from dominus.schema.tables import outcomes

DATA = Path(__file__).parent / "data"
SAMPLE_OUTCOMES = DATA / "sample_outcomes.csv"
SAMPLE_LISTINGS = DATA / "sample_listings.csv"
SAMPLE_NOTE = "SAMPLE DATA (invented sale)"
# Noon UTC on the day before the first invented sale (2026-02-02).
SCORED_AT = datetime(2026, 2, 1, 12, 0, tzinfo=UTC)


@dataclass(frozen=True)
class DemoResult:
    imported: int  # 0: the sample outcomes were there already
    run_id: int | None  # the scoring run, None when nothing was imported
    build: dict[str, Any]


def sample_outcomes_loaded(service: BacktestService) -> bool:
    query = select(func.count()).select_from(outcomes).where(outcomes.c.notes == SAMPLE_NOTE)
    with database_errors(), service.engine.connect() as connection:
        return int(connection.execute(query).scalar_one()) > 0


def import_sample_outcomes(service: BacktestService) -> int:
    """Record the sample outcomes (enqueueing the build as any sale would); 0 if already there."""
    if sample_outcomes_loaded(service):
        return 0
    return len(service.record(service.read_csv(SAMPLE_OUTCOMES)).outcomes)


def score_sample_names(service: BacktestService) -> int:
    """A pipeline run of the sample names with the offline providers, as of SCORED_AT."""
    store = PipelineStore(service.engine)
    run_input = RunInput(closeout=read_closeout_csv(SAMPLE_LISTINGS))
    run = store.create_run(run_input, SAMPLE, SCORED_AT)
    with open_providers(service.settings, SAMPLE) as providers:
        runner = PipelineRunner(
            store,
            providers,
            pipeline_options(service.settings),
            clock=lambda: SCORED_AT,
            stop=threading.Event(),
        )
        return runner.run(run.id).id


def run_demo(service: BacktestService) -> DemoResult:
    imported = import_sample_outcomes(service)
    run_id = score_sample_names(service) if imported else None
    return DemoResult(imported, run_id, service.build())
