"""The backtest.s integration tests run on SQLite and on PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest

from dominus.config import load_settings


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize(
            "backend",
            [
                pytest.param("sqlite"),
                pytest.param("postgresql", marks=[pytest.mark.postgres]),
            ],
        )


@pytest.fixture
def settings(database_url: str) -> Any:
    return load_settings(_env_file=None, DATABASE_URL=database_url, DOMINUS_PROVIDERS="offline")
