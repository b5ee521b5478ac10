"""Settings, read once at the edge (CLI entry point, API factory) and passed down.

Every setting comes from an environment variable of the same name (or a `.env` file in the
working directory). Values outside their allowed range are rejected at start-up with the
variable's name and the range, so a typo never turns into a silently odd worker.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import annotated_types
from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import SettingsConfigDict

from dominus.backtest.settings import BacktestSettings
from dominus.errors import ConfigurationError, InvalidRateLimitError
from dominus.host_names import parse_host_list
from dominus.jobs.concurrency import parse_concurrency_limits
from dominus.jobs.rate_limit import parse_rate_limits
from dominus.maintenance.settings import MaintenanceSettings
from dominus.notify.settings import NotificationSettings, check_notification_settings
from dominus.portfolio.settings import PortfolioSettings
from dominus.renewals.settings import RenewalSettings, check_renewal_settings
from dominus.scheduling.defaults import check_schedule_settings
from dominus.scheduling.settings import SchedulerSettings
from dominus.scoring.settings import scoring_config
from dominus.watchlist.settings import WatchlistSettings

DEFAULT_DATABASE_URL = "sqlite:///./data/dominus.db"


class Settings(
    PortfolioSettings,
    WatchlistSettings,
    BacktestSettings,
    SchedulerSettings,
    MaintenanceSettings,
    NotificationSettings,
    RenewalSettings,
):
    """Process-wide configuration: every feature's settings slice, composed (only the composition
    imports this class; a feature is handed the settings as its own slice type). Field names are
    the environment variable names. The providers' (`DOMINUS_PROVIDERS`, `DNS_*`, `RDAP_*`,
    `WHOIS_*`, `*_DATA_PATH`, `TRADEMARK_MARKS_PATH`) come from dominus.providers.settings, the
    pipeline's (`DEFAULT_KEYWORD_TLD`, `PIPELINE_STAGE_BUDGET_*`) from dominus.pipeline.settings;
    the scoring
    constants (`SCORING_*`, `TLD_PRICES_PATH`) are inherited from dominus.scoring.settings, the
    schedules' (`SCHEDULER_*`, `AUTO_TUNE_ENABLED`, `AUTO_TUNE_CRON`) from
    dominus.scheduling.settings, the backups' and the retentions (`BACKUP_*`, `*_RETENTION_DAYS`,
    `PRUNE_BATCH_SIZE`) from dominus.maintenance.settings, the portfolio's (`DROP_*`,
    `PORTFOLIO_RESCORE_CONCURRENCY`) from dominus.portfolio.settings, the weight tuner's other
    `AUTO_TUNE_*` from dominus.backtest.settings, the notifications' (`NOTIFY_*`) from
    dominus.notify.settings, the watchlist's (`WATCHLIST_*`) and the renewal alerts'
    (`RENEWAL_*`) from their packages."""

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
    # Jobs a worker may claim beyond its free slots when its handlers are quick (ADR 0033);
    # unset: the database backend's own cap.
    WORKER_MAX_PREFETCH: int | None = Field(default=None, ge=0, le=10_000)
    # The garbage collector's youngest-generation threshold while a worker runs (0: leave
    # Python's); dominus.jobs.collector says why.
    WORKER_GC_THRESHOLD: int = Field(default=10_000, ge=0, le=10_000_000)
    JOB_QUEUE_MAX_DEPTH: int = Field(default=0, ge=0, le=1_000_000_000)
    JOB_RETRY_BASE_MS: int = Field(default=1000, ge=0, le=86_400_000)
    JOB_RETRY_MAX_MS: int = Field(default=600_000, ge=0, le=7 * 86_400_000)
    # `prefix=N,...`: a job whose concurrency key starts with `prefix` (the longest that matches)
    # and whose enqueue gave no limit runs at most N at once (ADR 0052).
    CONCURRENCY_LIMITS: str = ""
    DOMINUS_DIAGNOSTIC_JOBS: bool = False
    # Set: every /api/v1 request needs `Authorization: Bearer <token>`.
    DOMINUS_API_TOKEN: SecretStr | None = Field(default=None)
    # Set (beside DOMINUS_API_TOKEN): a token that reads everything (GET) and changes nothing,
    # on the API and the dashboard alike (ADR 0055).
    DOMINUS_API_READ_TOKEN: SecretStr | None = Field(default=None)
    # Set (beside DOMINUS_API_TOKEN): a token that reads /api/v1/metrics and nothing else, for a
    # Prometheus scraper's configuration.
    DOMINUS_API_METRICS_TOKEN: SecretStr | None = Field(default=None)
    # Server-Sent Event streams one API process serves at once; one more is a 429.
    DOMINUS_MAX_STREAMS: int = Field(default=100, ge=1, le=10_000)
    # The largest request body the API reads; a larger one is a 413.
    DOMINUS_MAX_BODY_BYTES: int = Field(default=1_048_576, ge=1024, le=67_108_864)
    DOMINUS_LOG_LEVEL: str = Field(
        default="INFO", pattern="^(DEBUG|INFO|WARNING|ERROR|debug|info|warning|error)$"
    )
    # Comma-separated `name[:port]`: the Host names the API answers to besides loopback names
    # and the address it is bound to (a reverse proxy's public name, say). Others get a 421.
    DOMINUS_ALLOWED_HOSTS: str = ""
    # Comma-separated `KEY=COUNT/PERIOD` (`rdap:rdap.verisign.com=10/s,whois:whois.nic.io=1/2s`):
    # the rate limits every worker configures when it starts, shared by every process (ADR 0053).
    RATE_LIMITS: str = ""

    @field_validator("RATE_LIMITS")
    @classmethod
    def _engine_rate_limits_parse(cls, value: str) -> str:
        try:
            parse_rate_limits(value)
        except InvalidRateLimitError as error:
            raise ValueError(str(error)) from error
        return value

    @field_validator("CONCURRENCY_LIMITS")
    @classmethod
    def _concurrency_limits_parse(cls, value: str) -> str:
        parse_concurrency_limits(value)  # raises ValueError naming the entry
        return value

    @field_validator("DOMINUS_ALLOWED_HOSTS")
    @classmethod
    def _allowed_hosts_parse(cls, value: str) -> str:
        parse_host_list(value)  # raises ValueError naming the entry
        return value


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
    api_tokens(settings)
    _refuse_retired()
    scoring_config(settings)  # the SCORING_* constants together and the TLD price table
    check_schedule_settings(settings)  # cron expressions, time zone, catch-up window
    check_notification_settings(settings)  # the webhook URL, without repeating it
    check_renewal_settings(settings)  # critical before warning
    return settings


# Settings that are no longer read, and what replaced them: a value set for one would otherwise
# be ignored without a word.
RETIRED_SETTINGS = {
    "DEFAULT_RENEWAL_COST": "registration and renewal prices now come per TLD from the price "
    "table (TLD_PRICES_PATH; `dominus scoring config` shows it)",
}


def _refuse_retired() -> None:
    for name, replacement in RETIRED_SETTINGS.items():
        if name in os.environ:
            raise ConfigurationError(f"{name} is no longer read: {replacement}; unset it")


@dataclass(frozen=True)
class ApiTokens:
    """The tokens the API and the dashboard accept, each with its own powers (ADR 0055)."""

    full: str  # DOMINUS_API_TOKEN: everything
    read: str | None = None  # DOMINUS_API_READ_TOKEN: GET everything, change nothing
    metrics: str | None = None  # DOMINUS_API_METRICS_TOKEN: GET /api/v1/metrics only

    def named(self) -> list[tuple[str, str]]:
        """(setting, token) of each token set."""
        tokens = [
            ("DOMINUS_API_TOKEN", self.full),
            ("DOMINUS_API_READ_TOKEN", self.read),
            ("DOMINUS_API_METRICS_TOKEN", self.metrics),
        ]
        return [(name, token) for name, token in tokens if token is not None]


def api_token(settings: Settings) -> str | None:
    """The API token, or None when DOMINUS_API_TOKEN is unset.

    A token set to nothing (`DOMINUS_API_TOKEN=$UNSET_VAR`) is an error rather than "no token":
    read as "no token" it silently turns authentication off. A token no client could send in a
    header (surrounding whitespace, control characters) is refused too, since it would lock
    everyone out. The messages never repeat the value."""
    return _checked("DOMINUS_API_TOKEN", settings.DOMINUS_API_TOKEN)


def api_tokens(settings: Settings) -> ApiTokens | None:
    """Every token set, each checked as `api_token` checks the full one; None without
    DOMINUS_API_TOKEN. A read or metrics token without the full one is refused: the API would
    be open to every mutation while its operator believes it guarded. Two tokens alike are
    refused too: a request carrying it could not tell which powers it has."""
    full = api_token(settings)
    read = _checked("DOMINUS_API_READ_TOKEN", settings.DOMINUS_API_READ_TOKEN)
    metrics = _checked("DOMINUS_API_METRICS_TOKEN", settings.DOMINUS_API_METRICS_TOKEN)
    if full is None:
        for name, token in (
            ("DOMINUS_API_READ_TOKEN", read),
            ("DOMINUS_API_METRICS_TOKEN", metrics),
        ):
            if token is not None:
                raise ConfigurationError(
                    f"{name} is set without DOMINUS_API_TOKEN, so the API would take no token "
                    f"at all: set DOMINUS_API_TOKEN too, or unset {name}"
                )
        return None
    tokens = ApiTokens(full, read, metrics)
    named = tokens.named()
    for position, (name, token) in enumerate(named):
        for other, other_token in named[position + 1 :]:
            if token == other_token:
                raise ConfigurationError(f"{other} is the same as {name}: give each its own token")
    return tokens


def _checked(name: str, secret: SecretStr | None) -> str | None:
    if secret is None:
        return None
    token = secret.get_secret_value()
    if not token.strip():
        raise ConfigurationError(
            f"{name} is set but empty: set a token (for example the output of "
            '`python3 -c "import secrets; print(secrets.token_urlsafe(32))"`) or unset it'
        )
    if token != token.strip() or any(ord(char) < 0x20 or ord(char) == 0x7F for char in token):
        raise ConfigurationError(
            f"{name} begins or ends with whitespace or holds a control character, "
            "which no client can send in an Authorization header"
        )
    return token


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
