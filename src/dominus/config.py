"""Settings, read once at the edge (CLI entry point, API factory) and passed down.

Every setting comes from an environment variable of the same name (or a `.env` file in the
working directory). Values outside their allowed range are rejected at start-up with the
variable's name and the range, so a typo never turns into a silently odd worker.
"""

from __future__ import annotations

import annotated_types
from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from dominus.errors import ConfigurationError

DEFAULT_DATABASE_URL = "sqlite:///./data/dominus.db"


class Settings(BaseSettings):
    """Process-wide configuration. Field names are the environment variable names."""

    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        case_sensitive=True,
        extra="ignore",
        frozen=True,
    )

    DATABASE_URL: str = Field(default=DEFAULT_DATABASE_URL, min_length=1)
    WORKER_CONCURRENCY: int = Field(default=2, ge=1, le=256)
    JOB_QUEUE_POLL_INTERVAL_MS: int = Field(default=5000, ge=10, le=3_600_000)
    JOB_MAX_RUNNING_AGE_MS: int = Field(default=300_000, ge=1000, le=7 * 86_400_000)
    JOB_HEARTBEAT_INTERVAL_MS: int = Field(default=15_000, ge=100, le=3_600_000)
    WORKER_GRACEFUL_SHUTDOWN_TIMEOUT_MS: int = Field(default=30_000, ge=0, le=86_400_000)
    WORKER_SHUTDOWN_REQUEUE: bool = False
    JOB_QUEUE_MAX_DEPTH: int = Field(default=0, ge=0, le=1_000_000_000)
    JOB_RETRY_BASE_MS: int = Field(default=1000, ge=0, le=86_400_000)
    JOB_RETRY_MAX_MS: int = Field(default=600_000, ge=0, le=7 * 86_400_000)
    DOMINUS_DIAGNOSTIC_JOBS: bool = False
    # Set: every /api/v1 request needs `Authorization: Bearer <token>`.
    DOMINUS_API_TOKEN: SecretStr | None = Field(default=None)
    DOMINUS_LOG_LEVEL: str = Field(
        default="INFO", pattern="^(DEBUG|INFO|WARNING|ERROR|debug|info|warning|error)$"
    )


def load_settings(**overrides: object) -> Settings:
    """Build the settings from the environment, turning validation errors into one clear error."""
    try:
        settings = Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as error:
        raise ConfigurationError(_describe(error)) from error
    if settings.JOB_HEARTBEAT_INTERVAL_MS >= settings.JOB_MAX_RUNNING_AGE_MS:
        raise ConfigurationError(
            "JOB_HEARTBEAT_INTERVAL_MS must be smaller than JOB_MAX_RUNNING_AGE_MS "
            f"(got {settings.JOB_HEARTBEAT_INTERVAL_MS} >= {settings.JOB_MAX_RUNNING_AGE_MS}); "
            "otherwise live jobs would be reclaimed between heartbeats"
        )
    if settings.JOB_RETRY_BASE_MS > settings.JOB_RETRY_MAX_MS:
        raise ConfigurationError(
            "JOB_RETRY_BASE_MS must not exceed JOB_RETRY_MAX_MS "
            f"(got {settings.JOB_RETRY_BASE_MS} > {settings.JOB_RETRY_MAX_MS})"
        )
    return settings


def _describe(error: ValidationError) -> str:
    problems = []
    for issue in error.errors():
        name = ".".join(str(part) for part in issue["loc"]) or "settings"
        problems.append(f"{name}={issue.get('input')!r}: {issue['msg']}{_allowed_range(name)}")
    return "invalid settings: " + "; ".join(problems)


def _allowed_range(name: str) -> str:
    field = Settings.model_fields.get(name)
    if field is None:
        return ""
    low = next((item.ge for item in field.metadata if isinstance(item, annotated_types.Ge)), None)
    high = next((item.le for item in field.metadata if isinstance(item, annotated_types.Le)), None)
    if low is None and high is None:
        return ""
    lowest = "-inf" if low is None else str(low)
    highest = "inf" if high is None else str(high)
    return f" (allowed range: {lowest}..{highest})"
