"""PostgreSQL reads the array literals the settle writes as psycopg's own list parameters."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from sqlalchemy import make_url

from dominus.jobs.sql.array_literals import number_array, repeated_text_array, text_array

pytestmark = pytest.mark.backends("postgresql")

AWKWARD_TEXTS = [
    "plain",
    "",
    "NULL",
    "with space, comma {and braces}",
    'a "quoted" word',
    'back\\slash and \\" both',
    "ünïcödé ✓",
    "line\nbreak\ttab",
    None,
]
DOCUMENTS: list[Any] = [
    None,
    {"text": 'say "hi"\\', "n": [1, 2.5, None], "nested": {"ü": True}},
    [],
    "just a string",
    12,
]


@pytest.fixture
def connection(database_url: str) -> Iterator[psycopg.Connection[Any]]:
    conninfo = make_url(database_url).set(drivername="postgresql").render_as_string(False)
    with psycopg.connect(conninfo, autocommit=True) as connection:
        yield connection


def _both(connection: psycopg.Connection[Any], cast: str, literal: str, values: list[Any]) -> Any:
    row = connection.execute(f"SELECT %s::{cast}, %s::{cast}", (literal, values)).fetchone()
    assert row is not None
    return row


def test_texts_read_back_as_they_were(connection: psycopg.Connection[Any]) -> None:
    ours, psycopgs = _both(connection, "text[]", text_array(AWKWARD_TEXTS), AWKWARD_TEXTS)
    assert ours == psycopgs == AWKWARD_TEXTS


def test_repeated_texts_read_back_as_they_were(connection: psycopg.Connection[Any]) -> None:
    texts = [text for text in AWKWARD_TEXTS if text is not None] * 2 + ['a "quoted" word']
    ours, psycopgs = _both(connection, "text[]", repeated_text_array(texts), texts)
    assert ours == psycopgs == texts
    assert repeated_text_array(texts) == text_array(texts)


def test_json_documents_read_back_as_they_were(connection: psycopg.Connection[Any]) -> None:
    texts = [None if document is None else json.dumps(document) for document in DOCUMENTS]
    ours, psycopgs = _both(connection, "jsonb[]", text_array(texts), texts)
    assert ours == psycopgs == DOCUMENTS


@pytest.mark.parametrize(
    ("cast", "values"),
    [
        ("bigint[]", [1, 2**40, -3, None]),
        ("integer[]", [0, 7]),
        ("double precision[]", [0.1, 1e-05, 1 / 3, 12345.678901234567, 2.0, None, -0.0]),
        ("bigint[]", []),
    ],
)
def test_numbers_read_back_exactly(
    connection: psycopg.Connection[Any], cast: str, values: list[Any]
) -> None:
    ours, psycopgs = _both(connection, cast, number_array(values), values)
    assert ours == psycopgs == values
