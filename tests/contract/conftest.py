"""The store contract runs on every backend: each test once on SQLite, once on PostgreSQL."""

from __future__ import annotations

import pytest

BACKENDS = ("sqlite", "postgresql")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", BACKENDS)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("backend") == "postgresql":
            item.add_marker(pytest.mark.postgres)
