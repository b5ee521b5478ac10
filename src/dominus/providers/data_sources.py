"""Where an appraisal's data came from, in words an investor reads: "keywords: your Keyword
Planner file (1,204 rows); comps: your NameBio export (7,279 sales); marks: none"."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

SourceKind = Literal["file", "sample", "none"]

FORMAT_NAMES = {
    "keyword-planner": "Keyword Planner file",
    "namebio": "NameBio export",
    "report": "sales report",
    "csv": "CSV file",
    "marks": "marks file",
}
UNITS = {"keywords": "rows", "comps": "sales", "marks": "marks"}


@dataclass(frozen=True)
class DataSource:
    kind: SourceKind
    format: str = ""  # a FORMAT_NAMES key; "" for none
    rows: int | None = None
    path: str | None = None
    note: str = ""  # e.g. why a configured file gave nothing

    def text(self, unit: str) -> str:
        if self.kind == "none":
            return f"none ({self.note})" if self.note else "none"
        count = f" ({self.rows:,} {unit})" if self.rows is not None else ""
        if self.kind == "sample":
            return f"sample{count}"
        return f"your {FORMAT_NAMES.get(self.format, self.format)}{count}"

    def to_dict(self, unit: str) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "format": self.format or None,
            "rows": self.rows,
            "path": self.path,
            "text": self.text(unit),
        }


NO_SOURCE = DataSource("none")


@dataclass(frozen=True)
class DataSources:
    keywords: DataSource = NO_SOURCE
    comps: DataSource = NO_SOURCE
    marks: DataSource = NO_SOURCE

    def summary(self) -> str:
        return "; ".join(f"{name}: {source.text(UNITS[name])}" for name, source in self._named())

    def to_dict(self) -> dict[str, Any]:
        return {name: source.to_dict(UNITS[name]) for name, source in self._named()} | {
            "summary": self.summary()
        }

    def _named(self) -> list[tuple[str, DataSource]]:
        return [("keywords", self.keywords), ("comps", self.comps), ("marks", self.marks)]
