"""The Portfolio page's filter: which names it lists, from its query string (so a filtered list
is a link that can be kept), and the choices its form offers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlencode

StatusChoice = Literal["active", "sold", "dropped", "all"]
VerdictChoice = Literal["keep", "drop", "reprice", "none"]
STATUS_CHOICES: tuple[StatusChoice, ...] = ("active", "sold", "dropped", "all")
VERDICT_CHOICES: tuple[VerdictChoice, ...] = ("keep", "drop", "reprice", "none")
MAX_WINDOW_DAYS = 3_650  # ten years: further than any registration runs


@dataclass(frozen=True)
class EntryFilter:
    status: StatusChoice = "active"
    verdict: VerdictChoice | None = None  # "none": not judged yet
    registrar: str | None = None  # as listed, any case
    tld: str | None = None
    renewal_within: int | None = None  # days; names past due count as within any window

    def matches(self, entry: dict[str, Any]) -> bool:
        """`entry`: an entry's document (EntryOut)."""
        if self.verdict is not None and (entry["verdict"] or "none") != self.verdict:
            return False
        registrar = (entry["registrar"] or "").casefold()
        if self.registrar is not None and registrar != self.registrar.casefold():
            return False
        if self.tld is not None and entry["tld"] != self.tld.lower().lstrip("."):
            return False
        within = self.renewal_within
        return within is None or entry["days_until_renewal"] <= within

    @property
    def narrowed(self) -> bool:
        """Anything asked beyond the default list (every active name)."""
        return self != EntryFilter()

    def form(self) -> dict[str, str]:
        """The values the form shows (what was asked, kept after the page reloads)."""
        return {
            "status": self.status,
            "verdict": self.verdict or "",
            "registrar": self.registrar or "",
            "tld": self.tld or "",
            "renewal_within": "" if self.renewal_within is None else str(self.renewal_within),
        }

    def query(self) -> str:
        return urlencode({name: value for name, value in self.form().items() if value})


def blank_as_none(text: str | None) -> str | None:
    stripped = (text or "").strip()
    return stripped or None


def choices(entries: Sequence[dict[str, Any]], key: str) -> list[str]:
    """The distinct values of `key` among the entries, sorted (blanks left out)."""
    return sorted({str(entry[key]) for entry in entries if entry[key]}, key=str.casefold)
