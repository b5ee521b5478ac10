"""Renewal alerts, the watchlist and dead-letter notifications run on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize(
            "backend",
            ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)],
        )
