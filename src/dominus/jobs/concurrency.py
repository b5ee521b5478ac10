"""Concurrency keys (ADR 0052): the rule for a key's name and its limit, and where a job's limit
comes from when its caller gives none.

A job with a `concurrency_key` runs only while fewer than its limit of jobs with the same key are
running (claimed ahead included), on every worker and host: the claim enforces it, in the claim's
own transaction (`dominus.jobs.sql`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dominus.errors import InvalidJobOptionError

CONCURRENCY_KEY_MAX_LENGTH = 200
# Printable ASCII without the space: a key reads the same in a log line, a URL and a shell.
CONCURRENCY_KEY_PATTERN = r"^[!-~]{1,200}$"
_KEY = re.compile(CONCURRENCY_KEY_PATTERN)
MAX_CONCURRENCY_LIMIT = 10_000
# A key named without a limit anywhere: one job at a time, the conservative reading.
DEFAULT_CONCURRENCY_LIMIT = 1


class InvalidConcurrencyLimitError(InvalidJobOptionError, ValueError):
    """A concurrency key or limit out of its rule (also a ValueError for Python callers)."""


def check_concurrency_key(key: Any, where: str = "") -> str:
    """`key` if it is a concurrency key (1–200 printable ASCII characters, no space); raises
    InvalidConcurrencyLimitError, in one line, otherwise."""
    if not isinstance(key, str) or _KEY.fullmatch(key) is None:
        shown = key if isinstance(key, str) else type(key).__name__
        raise InvalidConcurrencyLimitError(
            f"{where}concurrency_key must be 1 to {CONCURRENCY_KEY_MAX_LENGTH} printable ASCII "
            f"characters without spaces, got {shown[:80]!r}"
        )
    return key


def check_concurrency_limit(limit: Any, where: str = "") -> int:
    """`limit` if it is a whole number from 1 to MAX_CONCURRENCY_LIMIT; raises
    InvalidConcurrencyLimitError, in one line, otherwise (0 would never run the key's jobs)."""
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise InvalidConcurrencyLimitError(
            f"{where}concurrency_limit must be a whole number, got {str(limit)[:40]!r}"
        )
    if not 1 <= limit <= MAX_CONCURRENCY_LIMIT:
        raise InvalidConcurrencyLimitError(
            f"{where}concurrency_limit must be between 1 and {MAX_CONCURRENCY_LIMIT}, got {limit}"
        )
    return limit


def parse_concurrency_limit(text: str | None, where: str = "") -> int | None:
    """A limit typed as text (`--concurrency-limit`), checked as `check_concurrency_limit`; a
    value that is not a whole number is refused in one line too, with nothing written."""
    if text is None:
        return None
    if re.fullmatch(r"[+-]?[0-9]{1,9}", text.strip()) is None:
        raise InvalidConcurrencyLimitError(
            f"{where}concurrency_limit must be a whole number, got {text[:40]!r}"
        )
    return check_concurrency_limit(int(text), where)


@dataclass(frozen=True)
class ConcurrencyLimits:
    """The operator's limits by key prefix (`CONCURRENCY_LIMITS="backup=1,portfolio-rescore:=1"`):
    a key takes the limit of the longest prefix it starts with."""

    by_prefix: Mapping[str, int] = field(default_factory=dict)

    def limit_for(self, key: str) -> int | None:
        matching = [prefix for prefix in self.by_prefix if key.startswith(prefix)]
        if not matching:
            return None
        return self.by_prefix[max(matching, key=len)]


NO_LIMITS = ConcurrencyLimits()


def parse_concurrency_limits(text: str) -> ConcurrencyLimits:
    """`prefix=N,prefix=N` as limits; blank entries are ignored. Raises ValueError (one line)
    for an entry without `=`, a bad prefix or limit, or a prefix given twice."""
    limits: dict[str, int] = {}
    for entry in (part.strip() for part in text.split(",")):
        if not entry:
            continue
        prefix, sep, count = entry.rpartition("=")
        if not sep:
            raise InvalidConcurrencyLimitError(
                f"CONCURRENCY_LIMITS: {entry[:80]!r} is not prefix=limit"
            )
        check_concurrency_key(prefix, "CONCURRENCY_LIMITS: ")
        if not count.strip().isdigit():
            raise InvalidConcurrencyLimitError(
                f"CONCURRENCY_LIMITS: the limit of {prefix!r} must be a whole number, "
                f"got {count[:40]!r}"
            )
        if prefix in limits:
            raise InvalidConcurrencyLimitError(f"CONCURRENCY_LIMITS: {prefix!r} is given twice")
        limits[prefix] = check_concurrency_limit(int(count), f"CONCURRENCY_LIMITS: {prefix!r}: ")
    return ConcurrencyLimits(limits)


def resolve_concurrency(
    key: str | None,
    limit: int | None,
    *,
    default_limit: int | None,
    limits: ConcurrencyLimits,
    where: str = "",
) -> tuple[str | None, int | None]:
    """A job's (key, limit): the caller's limit, else the operator's longest matching prefix,
    else the registration's default, else 1. No key: no limit (a limit alone is refused)."""
    if limit is not None:
        check_concurrency_limit(limit, where)
    if key is None:
        if limit is not None:
            raise InvalidConcurrencyLimitError(f"{where}concurrency_limit needs a concurrency_key")
        return None, None
    check_concurrency_key(key, where)
    if limit is None:
        limit = limits.limit_for(key)
    if limit is None:
        limit = default_limit
    return key, DEFAULT_CONCURRENCY_LIMIT if limit is None else limit
