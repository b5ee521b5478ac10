"""Parameter types shared by the API's and the dashboard's routes."""

from __future__ import annotations

import re

from pydantic import BeforeValidator

_DIGITS = re.compile(r"[+-]?[0-9]+")


def _digits_only(value: object) -> object:
    """Pydantic's lax mode reads "600.0" and "6e2" as 600; a cursor, an id or a limit in a URL is
    written in digits, and anything else is more likely a client's bug than a number it meant."""
    if isinstance(value, str) and _DIGITS.fullmatch(value) is None:
        raise ValueError("must be a whole number written in digits")
    return value


# Listed after the Query/Path in a parameter's Annotated (`Annotated[int, Query(ge=1),
# DIGITS_ONLY]`): nested in an Annotated alias of its own, FastAPI writes the bounds into the
# OpenAPI schema as `ge`/`le` instead of `minimum`/`maximum`.
DIGITS_ONLY = BeforeValidator(_digits_only)
