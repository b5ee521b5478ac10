"""The portfolio's settings, on top of the pipeline's (a rescore appraises with its providers and
scoring) (a base class of `dominus.config.Settings`; pydantic checks the
ranges at start-up, so an invalid value is exit 2 naming the variable)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from dominus.pipeline.settings import PipelineSettings

DropMethod = Literal["expected", "threshold", "npv"]


class PortfolioSettings(PipelineSettings):
    # How verdicts are reached (ADR 0021): the money gate for one more year (`expected`), the
    # score against DROP_SCORE_THRESHOLD (`threshold`), or a five-year net present value (`npv`).
    DROP_METHOD: DropMethod = "expected"
    # A score (0–100) below this is "low".
    DROP_SCORE_THRESHOLD: float = Field(default=25, ge=0, le=100)
    # A renewal this many UTC calendar days away or fewer (past due included) is "within the
    # horizon": the name must be decided on now.
    DROP_RENEWAL_HORIZON_DAYS: int = Field(default=60, ge=0, le=3650)
    # Names PORTFOLIO_RESCORE appraises at once.
    PORTFOLIO_RESCORE_CONCURRENCY: int = Field(default=4, ge=1, le=64)
