"""PostgreSQL array literals (`{1,2,NULL}`, `{"a","b\\"c"}`) written by joins, for statements
that take a whole batch as array parameters and cast them (`%(ids)s::bigint[]`).

psycopg dumps a Python list element by element in Python (a dumper call and a regular
expression search for quoting each); the worker loop's settle sends seven lists per batch and
four constant ones, which made that dumping a tenth of the loop thread's CPU per job on
PostgreSQL. A literal made here is one text parameter: the server parses it with the cast.
"""

from __future__ import annotations

from collections.abc import Iterable


def number_array(values: Iterable[int | float | None]) -> str:
    """Integers or floats (None: NULL), written as Python writes them: `repr` of a float is its
    shortest round-trip text, which float8 input reads back exactly."""
    return "{" + ",".join(["NULL" if value is None else repr(value) for value in values]) + "}"


def text_array(values: Iterable[str | None]) -> str:
    """Texts (None: NULL), each in double quotes, its backslashes and double quotes escaped:
    the only characters special inside a quoted array element."""
    return "{" + ",".join(["NULL" if value is None else _quoted(value) for value in values]) + "}"


def repeated_text_array(values: Iterable[str]) -> str:
    """`text_array` of texts that repeat (a batch's worker ids: one worker's, mostly), each
    distinct one quoted once."""
    quoted: dict[str, str] = {}
    return "{" + ",".join([quoted.get(v) or quoted.setdefault(v, _quoted(v)) for v in values]) + "}"


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
