"""The portfolio's integration tests run on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize(
            "backend",
            [
                pytest.param("sqlite"),
                pytest.param("postgresql", marks=[pytest.mark.postgres]),
            ],
        )
