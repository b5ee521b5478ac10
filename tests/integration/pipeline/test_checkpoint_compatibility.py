"""A run in flight during an upgrade resumes from the checkpoints the earlier code wrote
(captured fixtures, the dict-based format) and finishes like a run that never stopped."""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from dominus.jobs.clock import utc_now
from dominus.pipeline.model import STAGES, RunInput, RunStatus, Stage
from dominus.pipeline.runner import PipelineOptions, PipelineRunner
from dominus.pipeline.store import PipelineStore
from dominus.providers.models import DnsVerdict, RdapRecord, StopSignal
from dominus.providers.offline import offline_providers

pytestmark = pytest.mark.backends("sqlite", "postgresql")


FIXTURE = Path(__file__).parents[2] / "fixtures" / "checkpoints_before_0016" / "complete_run.json"
# The input the fixture's run was started with (see the fixture directory's README).
FIXTURE_INPUT = RunInput(
    keywords=["home gym", "solar panels", "meal prep"],
    brandable=["zentrova", "Zentrova.com", "nikeshoes", "bad..name", "bücher"],
    closeout=[
        {"domain": "oldgardentools.com", "age": 12, "backlinks": 300, "wayback": 90},
        {"domain": "quietkitchen.net", "age": 4.0},
    ],
)


class NoLookups:
    """DNS and RDAP that fail the test if asked: a resumed run must not redo finished stages."""

    def check(self, domain: str, stop: StopSignal | None = None) -> DnsVerdict:
        raise AssertionError(f"DNS asked about {domain} again")

    def lookup(self, domain: str, stop: StopSignal | None = None) -> RdapRecord:
        raise AssertionError(f"RDAP asked about {domain} again")


@pytest.mark.parametrize("finished", [1, 3, 4], ids=["after-generate", "after-rdap", "after-score"])
def test_a_run_resumes_from_old_format_checkpoints(
    engine: Engine, backend: str, finished: int
) -> None:
    old: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    runs = PipelineStore(engine)
    run = runs.create_run(FIXTURE_INPUT, "sample", utc_now())
    for stage in STAGES[:finished]:
        report = {"status": "completed"}
        runs.complete_stage(run.id, stage, old[stage.value], report, None, utc_now())

    providers = offline_providers()
    if finished >= 3:
        providers = dataclasses.replace(providers, dns=NoLookups(), rdap=NoLookups())
    options = PipelineOptions()
    done = PipelineRunner(runs, providers, options, clock=utc_now, stop=threading.Event()).run(
        run.id
    )

    assert done.status is RunStatus.COMPLETED and not done.degraded
    summary = done.summary or {}
    assert (summary["candidates"], summary["invalid"], summary["duplicates"]) == (8, 1, 1)
    scores = {row["domain"]: row for row in runs.run_scores(run.id)}
    if finished == 4:
        assert set(scores) == set(old["trademark"]["verdicts"])
    else:  # scored now: a closeout name is bought, whatever RDAP said (it said registered)
        assert set(scores) == {*old["trademark"]["verdicts"], "oldgardentools.com"}
        assert scores["oldgardentools.com"]["details"]["acquisition"] == "purchase"
    assert scores["nikeshoes.com"]["trademark_verdict"] == "blocked"
    assert scores["homegym.com"]["recommended"] is True
    if finished == 4:  # the scores are the checkpoint's, read back as they were written
        assert scores["homegym.com"]["expected_value"] == 3526.85
    checkpoints = runs.checkpoints(run.id)
    assert set(checkpoints) == set(Stage)
    for stage in STAGES[:finished]:
        assert checkpoints[stage] == old[stage.value]  # finished stages are not rewritten
