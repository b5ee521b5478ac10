"""Provider errors. Per-domain lookup failures are never raised (they become UNKNOWN verdicts);
these are for things an operator must fix: a bad data file, an unusable bootstrap document."""

from __future__ import annotations

from pathlib import Path

from dominus.errors import InvalidInputError


class ProviderError(InvalidInputError):
    """A provider could not be set up or used."""


class ProviderDataError(ProviderError):
    """A provider data file is missing, unreadable or malformed."""

    code = "invalid_data"

    def __init__(self, path: Path | str, problem: str, line: int | None = None) -> None:
        where = f"{path}, line {line}" if line is not None else str(path)
        super().__init__(f"{where}: {problem}")
        self.path = Path(path)
        self.line = line
        self.problem = problem


class BootstrapError(ProviderError):
    """The RDAP bootstrap document could not be fetched or is not in the IANA format."""
