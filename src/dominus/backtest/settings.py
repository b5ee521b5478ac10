"""The weight tuner's safety settings. `BacktestSettings` is a base class of
`dominus.config.Settings`; AUTO_TUNE_ENABLED and AUTO_TUNE_CRON (the schedule) live with the
scheduler's settings."""

from __future__ import annotations

from pydantic import Field

from dominus.pipeline.settings import PipelineSettings


class BacktestSettings(PipelineSettings):
    # A tune applies nothing unless the snapshot holds at least this many sales.
    AUTO_TUNE_MIN_SAMPLE: int = Field(default=20, ge=1, le=1_000_000)
    # No weight may move by more than this in one tune (shares of 1).
    AUTO_TUNE_MAX_DELTA: float = Field(default=0.05, gt=0, le=1)
    # No suggested weight may be further than this from its default.
    AUTO_TUNE_MAX_DRIFT: float = Field(default=0.20, gt=0, le=1)
    # true: WEIGHT_TUNE records what it would do and writes no weight set.
    AUTO_TUNE_DRY_RUN: bool = True
