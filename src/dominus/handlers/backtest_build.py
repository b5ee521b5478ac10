"""BACKTEST_BUILD {min_sample_size? (5)}: snapshot the sold outcomes against the scores before
them, report, and suggest weights when the sample holds at least min_sample_size sales.
Result: {signals_built, new_signals, report, suggestion?, skipped}. Recording a sale with a price
enqueues one (deduplicated while one is pending); it can also be enqueued by hand."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dominus.backtest.build_queue import BACKTEST_BUILD
from dominus.backtest.service import (
    DEFAULT_MIN_SAMPLE_SIZE,
    MAX_MIN_SAMPLE_SIZE,
    BacktestService,
)
from dominus.handlers.dependencies import HandlerDependencies
from dominus.jobs.context import JobContext
from dominus.jobs.payload_options import snake_or_camel
from dominus.jobs.registry import HandlerRegistry


class BacktestBuildPayload(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min_sample_size: int = Field(
        default=DEFAULT_MIN_SAMPLE_SIZE,
        ge=1,
        le=MAX_MIN_SAMPLE_SIZE,
        validation_alias=snake_or_camel("min_sample_size"),
        description="Sales needed before a weight suggestion is made.",
    )


def register_backtest_build(registry: HandlerRegistry, dependencies: HandlerDependencies) -> None:
    def handle(payload: BacktestBuildPayload, context: JobContext) -> dict[str, Any]:
        service = BacktestService(dependencies.settings, dependencies.engine, dependencies.clock)
        context.progress(phase="snapshot")
        context.abort.raise_if_set()
        result = service.build(payload.min_sample_size, stop=context.abort.raise_if_set)
        context.progress(phase="done", signals=result["signals_built"])
        return result

    registry.register(BACKTEST_BUILD, handle, BacktestBuildPayload, max_attempts=3)
