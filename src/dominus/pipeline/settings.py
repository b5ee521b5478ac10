"""The pipeline's settings: the default TLD of keyword candidates and each stage's time budget,
on top of the providers' and the scoring's (a pipeline run needs all three). `PipelineSettings`
is a base class of `dominus.config.Settings`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field

from dominus.providers.settings import ProviderSettings
from dominus.scoring.settings import ScoringSettings, scoring_config

if TYPE_CHECKING:
    from dominus.pipeline.runner import PipelineOptions


class PipelineSettings(ProviderSettings, ScoringSettings):
    # A value model fitted on your own sales (`dominus valuation fit`); unset: the bundled one.
    VALUATION_MODEL_PATH: str | None = None
    DEFAULT_KEYWORD_TLD: str = Field(default="com", pattern=r"^[a-z0-9-]+(\.[a-z0-9-]+)*$")
    # A stage's time budget: base + per candidate, capped. Over budget → the run is degraded.
    PIPELINE_STAGE_BUDGET_BASE_MS: int = Field(default=30_000, ge=100, le=86_400_000)
    PIPELINE_STAGE_BUDGET_PER_CANDIDATE_MS: int = Field(default=200, ge=0, le=600_000)
    PIPELINE_STAGE_BUDGET_MAX_MS: int = Field(default=3_600_000, ge=100, le=7 * 86_400_000)


def pipeline_options(settings: PipelineSettings) -> PipelineOptions:
    # Imported here: the settings class is every process's (the CLI's quickest commands
    # included), the runner and the value model (numpy, the providers) only a pipeline's.
    from dominus.pipeline.runner import PipelineOptions  # noqa: PLC0415
    from dominus.valuation import load_model  # noqa: PLC0415

    path = settings.VALUATION_MODEL_PATH
    return PipelineOptions(
        value_model=load_model(Path(path) if path else None),
        default_tld=settings.DEFAULT_KEYWORD_TLD,
        dns_concurrency=settings.DNS_CONCURRENCY,
        rdap_concurrency=settings.RDAP_CONCURRENCY,
        budget_base_seconds=settings.PIPELINE_STAGE_BUDGET_BASE_MS / 1000,
        budget_per_candidate_seconds=settings.PIPELINE_STAGE_BUDGET_PER_CANDIDATE_MS / 1000,
        budget_max_seconds=settings.PIPELINE_STAGE_BUDGET_MAX_MS / 1000,
        scoring=scoring_config(settings),
    )
