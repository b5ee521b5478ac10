"""The portfolio's integration tests run on SQLite and on PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine

from dominus.config import Settings, load_settings
from dominus.portfolio.service import PortfolioService


@pytest.fixture
def settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Settings:
    """Default settings, whatever the environment says about the portfolio."""
    monkeypatch.chdir(tmp_path)
    for name in ("DROP_METHOD", "DROP_SCORE_THRESHOLD", "DROP_RENEWAL_HORIZON_DAYS"):
        monkeypatch.delenv(name, raising=False)
    return load_settings()


@pytest.fixture
def service(engine: Engine, settings: Settings) -> PortfolioService:
    return PortfolioService(engine, settings)
