"""Domains as providers take them: under the rules run input follows (`normalise_domain`), so a
name listed in a data file and a candidate meet however either was written (`Bücher.com` in
`registered.txt` is the candidate `xn--bcher-kva.com`), and a name those rules refuse is never
looked up nor reported available."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dominus.domain_names import InvalidNameError, normalise_domain
from dominus.providers.csvfiles import require
from dominus.providers.errors import ProviderDataError


def listed_domain(path: Path, line: int, column: str, value: str) -> str:
    """A data file's domain in its ASCII form, or ProviderDataError naming the line and why."""
    try:
        return normalise_domain(require(path, line, column, value)).ascii
    except InvalidNameError as error:
        raise ProviderDataError(
            path, f"{column} {value!r} is not a valid domain: {error}", line
        ) from None


@dataclass(frozen=True)
class NameToLookUp:
    domain: str  # the ASCII form, or (when invalid) the name as given, trimmed and lower-cased
    problem: str | None = None  # why it cannot be looked up; None when it can

    @property
    def detail(self) -> str:
        return f"not a valid domain name: {self.problem}"


def name_to_look_up(domain: str) -> NameToLookUp:
    try:
        return NameToLookUp(normalise_domain(domain).ascii)
    except InvalidNameError as error:
        return NameToLookUp(domain.strip().lower().rstrip("."), str(error))
