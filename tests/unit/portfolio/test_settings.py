"""The portfolio settings: defaults, and an invalid value names its variable (exit 2 at start)."""

from __future__ import annotations

import pytest

from dominus.config import load_settings
from dominus.errors import ConfigurationError


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    for name in (
        "DROP_METHOD",
        "DROP_SCORE_THRESHOLD",
        "DROP_RENEWAL_HORIZON_DAYS",
        "PORTFOLIO_RESCORE_CONCURRENCY",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # type: ignore[arg-type]


def test_defaults() -> None:
    settings = load_settings()
    assert settings.DROP_METHOD == "expected"
    assert settings.DROP_SCORE_THRESHOLD == 25
    assert settings.DROP_RENEWAL_HORIZON_DAYS == 60
    assert settings.PORTFOLIO_RESCORE_CONCURRENCY == 4


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DROP_METHOD", "gut-feeling"),
        ("DROP_SCORE_THRESHOLD", "101"),
        ("DROP_SCORE_THRESHOLD", "-1"),
        ("DROP_RENEWAL_HORIZON_DAYS", "-1"),
        ("DROP_RENEWAL_HORIZON_DAYS", "soon"),
        ("PORTFOLIO_RESCORE_CONCURRENCY", "0"),
    ],
)
def test_invalid_values_name_the_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigurationError, match=name):
        load_settings()
