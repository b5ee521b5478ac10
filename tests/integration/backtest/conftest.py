"""The backtest's integration tests: settings on the test's database, offline providers."""

from __future__ import annotations

from typing import Any

import pytest

from dominus.config import load_settings


@pytest.fixture
def settings(database_url: str) -> Any:
    return load_settings(_env_file=None, DATABASE_URL=database_url, DOMINUS_PROVIDERS="sample")
