"""Parameter types shared by the API's and the dashboard's routes."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BeforeValidator

_DIGITS = re.compile(r"[+-]?[0-9]+")


def _digits_only(value: object) -> object:
    """Pydantic's lax mode reads "600.0" and "6e2" as 600; a cursor, an id or a limit in a URL is
    written in digits, and anything else is more likely a client's bug than a number it meant."""
    if isinstance(value, str) and _DIGITS.fullmatch(value) is None:
        raise ValueError("must be a whole number written in digits")
    return value


WholeNumber = Annotated[int, BeforeValidator(_digits_only)]
