"""Limits on JSON that comes from users: how deep it nests and how big it is.

Python's `json` parser and every recursive walk over its result (ours, pydantic's, the JSON
encoder's) use the interpreter's stack, so a document nested a few hundred levels deep is a
`RecursionError` somewhere, whoever reads it. No job payload or request needs more than a handful
of levels; MAX_JSON_DEPTH leaves ample room and keeps every walk far from the stack's limit.

Depth counts containers: `1` is 0, `[]` and `{"a": 1}` are 1, `{"a": [1]}` is 2.
"""

from __future__ import annotations

import json
import re
from typing import Any

from dominus.errors import InvalidPayloadError

MAX_JSON_DEPTH = 64
# A job payload is parameters, not data: the largest JSON document one may be.
MAX_PAYLOAD_BYTES = 1_048_576

_CONTAINERS = (dict, list, tuple)
# A JSON string, or the rest of the text after an opening quote that is never closed.
# Possessive quantifiers: the match never backtracks, so the scan stays linear on any input.
_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"?', re.DOTALL)
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")
_OPENERS = frozenset(b"[{")


def too_deep_message(what: str) -> str:
    return f"{what} is nested more than {MAX_JSON_DEPTH} levels deep"


def too_big_message(what: str, size: int) -> str:
    return f"{what} is {size:,} bytes of JSON, over the limit of {MAX_PAYLOAD_BYTES:,}"


def text_nests_deeper_than(text: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the JSON text `text` opens more than `limit` containers at once, found without
    parsing it (brackets inside strings do not count), in whichever encoding `json.loads` would
    read it. Linear in the text; malformed text is left for the parser to report."""
    if text.count(b"[") + text.count(b"{") <= limit:
        return False  # the usual case, at the cost of two C-speed scans
    encoding = json.detect_encoding(text)
    if encoding not in ("utf-8", "utf-8-sig"):
        # json.loads reads UTF-16 and UTF-32 too; scanned as bytes, such a text's code units
        # can hold a quote's byte (U+0122 is 22 01) and hide every bracket after it
        text = text.decode(encoding, errors="replace").encode("utf-8")
    brackets = _STRING.sub(b"", text).translate(None, _NOT_BRACKETS)
    depth = 0
    for byte in brackets:
        if byte in _OPENERS:
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
            if depth < 0:
                return False  # a closer with nothing open: the parser stops here with an error
    return False


def value_nests_deeper_than(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether a parsed value (dicts, lists, tuples) nests more than `limit` containers deep.
    Iterative, and it stops at the first path over the limit, so a self-referencing value is
    "too deep" rather than an endless walk."""
    if not isinstance(value, _CONTAINERS):
        return False
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        node, depth = pending.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        pending.extend((child, depth + 1) for child in children if isinstance(child, _CONTAINERS))
    return False


def loads_limited(text: str, what: str) -> Any:
    """`json.loads(text)` for user input: text over MAX_PAYLOAD_BYTES or nested over
    MAX_JSON_DEPTH, and invalid JSON, raise InvalidPayloadError naming `what` (never a
    RecursionError)."""
    raw = text.encode("utf-8", "replace")
    if len(raw) > MAX_PAYLOAD_BYTES:
        raise InvalidPayloadError(too_big_message(what, len(raw)))
    if text_nests_deeper_than(raw):
        raise InvalidPayloadError(too_deep_message(what))
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidPayloadError(f"{what} is not valid JSON: {error}") from None
    except RecursionError:  # not reachable after the scan above; kept as the last guard
        raise InvalidPayloadError(too_deep_message(what)) from None
