"""A domain's status values as an RDAP answer gives them, in one spelling.

RFC 9083 (section 10.2.2, with RFC 8056's mapping from EPP) writes status values in lower case
with spaces ("pending delete", "redemption period", "auto renew period"); some servers pass the
EPP codes through in camelCase ("pendingDelete", "redemptionPeriod"). Both are read as the RFC
9083 form, so one comparison serves every server. The list comes from a server we do not
control: a value that is not a short string of letters, spaces, `_` or `-` is skipped, and only
the first MAX_STATUSES are kept.
"""

from __future__ import annotations

import re
from typing import Any

MAX_STATUSES = 32
MAX_STATUS_LENGTH = 64

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z])(?=[A-Z])")
_SEPARATORS = re.compile(r"[\s_-]+")
_LETTERS_AND_SPACES = re.compile(r"[a-z]+( [a-z]+)*")


def normalised_status(value: str) -> str | None:
    """ "pendingDelete", "pending delete", "PENDING_DELETE" → "pending delete"; None for a value
    that is no status word."""
    if len(value) > MAX_STATUS_LENGTH:
        return None
    spaced = _SEPARATORS.sub(" ", _CAMEL_BOUNDARY.sub(" ", value.strip())).strip().lower()
    return spaced if _LETTERS_AND_SPACES.fullmatch(spaced) else None


def statuses_of(member: Any) -> tuple[str, ...] | None:
    """The `status` member of a domain object as normalised values, in order, without
    duplicates; None when the answer has no status list (the registry said nothing, which is
    not "no status")."""
    if not isinstance(member, list):
        return None
    found: list[str] = []
    for value in member:
        status = normalised_status(value) if isinstance(value, str) else None
        if status is not None and status not in found:
            found.append(status)
        if len(found) == MAX_STATUSES:
            break
    return tuple(found)
