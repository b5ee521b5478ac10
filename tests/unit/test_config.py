from __future__ import annotations

import pytest

from dominus.config import DEFAULT_DATABASE_URL, load_settings
from dominus.errors import ConfigurationError


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    for name in (
        "DATABASE_URL",
        "WORKER_CONCURRENCY",
        "JOB_QUEUE_POLL_INTERVAL_MS",
        "JOB_MAX_RUNNING_AGE_MS",
        "JOB_HEARTBEAT_INTERVAL_MS",
        "WORKER_GRACEFUL_SHUTDOWN_TIMEOUT_MS",
        "JOB_QUEUE_MAX_DEPTH",
        "JOB_RETRY_BASE_MS",
        "JOB_RETRY_MAX_MS",
        "DOMINUS_API_TOKEN",
        "DOMINUS_ALLOWED_HOSTS",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # type: ignore[arg-type]


def test_defaults_are_the_seed_design_values() -> None:
    settings = load_settings()
    assert settings.DATABASE_URL == DEFAULT_DATABASE_URL == "sqlite:///./data/dominus.db"
    assert settings.WORKER_CONCURRENCY == 2
    assert settings.JOB_QUEUE_POLL_INTERVAL_MS == 5000
    assert settings.JOB_MAX_RUNNING_AGE_MS == 300_000
    assert settings.JOB_HEARTBEAT_INTERVAL_MS == 15_000
    assert settings.WORKER_GRACEFUL_SHUTDOWN_TIMEOUT_MS == 30_000
    assert settings.JOB_QUEUE_MAX_DEPTH == 0
    assert settings.WORKER_SHUTDOWN_REQUEUE is False


def test_small_values_that_tests_need_are_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JOB_HEARTBEAT_INTERVAL_MS", "100")
    monkeypatch.setenv("JOB_MAX_RUNNING_AGE_MS", "1000")
    monkeypatch.setenv("JOB_QUEUE_POLL_INTERVAL_MS", "10")
    settings = load_settings()
    assert settings.JOB_HEARTBEAT_INTERVAL_MS == 100
    assert settings.JOB_MAX_RUNNING_AGE_MS == 1000
    assert settings.JOB_QUEUE_POLL_INTERVAL_MS == 10


@pytest.mark.parametrize(
    ("name", "value", "allowed"),
    [
        ("WORKER_CONCURRENCY", "0", "1..256"),
        ("JOB_QUEUE_POLL_INTERVAL_MS", "9", "10..3600000"),
        ("JOB_HEARTBEAT_INTERVAL_MS", "99", "100..3600000"),
        ("JOB_MAX_RUNNING_AGE_MS", "999", "1000.."),
        ("JOB_QUEUE_MAX_DEPTH", "-1", "0.."),
    ],
)
def test_out_of_range_values_name_the_variable_and_range(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, allowed: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigurationError) as raised:
        load_settings()
    assert name in str(raised.value)
    assert f"allowed range: {allowed}" in str(raised.value)


def test_non_numbers_are_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKER_CONCURRENCY", "lots")
    with pytest.raises(ConfigurationError, match="WORKER_CONCURRENCY"):
        load_settings()


def test_heartbeat_must_be_shorter_than_the_stale_threshold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JOB_HEARTBEAT_INTERVAL_MS", "5000")
    monkeypatch.setenv("JOB_MAX_RUNNING_AGE_MS", "5000")
    with pytest.raises(ConfigurationError, match="JOB_HEARTBEAT_INTERVAL_MS"):
        load_settings()


@pytest.mark.parametrize("token", ["", " ", "\t\n "])
def test_an_empty_api_token_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, token: str
) -> None:
    """Read as "no token" it would silently turn authentication off."""
    monkeypatch.setenv("DOMINUS_API_TOKEN", token)
    with pytest.raises(ConfigurationError, match="DOMINUS_API_TOKEN is set but empty"):
        load_settings()


@pytest.mark.parametrize("token", [" leading-secret", "trailing-secret ", "new\nline-secret"])
def test_an_api_token_no_header_can_carry_is_refused_without_echoing_it(
    monkeypatch: pytest.MonkeyPatch, token: str
) -> None:
    monkeypatch.setenv("DOMINUS_API_TOKEN", token)
    with pytest.raises(ConfigurationError, match="DOMINUS_API_TOKEN") as raised:
        load_settings()
    assert "secret" not in str(raised.value)


def test_a_non_ascii_api_token_is_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOMINUS_API_TOKEN", "pässwörd ünïcode ✓")
    settings = load_settings()
    assert settings.DOMINUS_API_TOKEN is not None
    assert settings.DOMINUS_API_TOKEN.get_secret_value() == "pässwörd ünïcode ✓"


def test_allowed_hosts_are_checked_at_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOMINUS_ALLOWED_HOSTS", "dominus.example.com,proxy.example:8443")
    assert load_settings().DOMINUS_ALLOWED_HOSTS == "dominus.example.com,proxy.example:8443"
    monkeypatch.setenv("DOMINUS_ALLOWED_HOSTS", "dominus.example.com,https://proxy.example")
    with pytest.raises(ConfigurationError, match="DOMINUS_ALLOWED_HOSTS") as raised:
        load_settings()
    assert "https://proxy.example" in str(raised.value)
