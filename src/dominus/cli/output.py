"""Printing: JSON documents to stdout, tables and messages through Rich."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel
from rich.console import Console

from dominus.jobs.documents import dumped

console = Console(highlight=False, soft_wrap=True)
errors = Console(stderr=True, highlight=False, soft_wrap=True)


def print_json(document: Any) -> None:
    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def print_model(shape: BaseModel | Sequence[BaseModel]) -> None:
    """A JSON shape (a feature's `documents` model, or a list of them) as the API returns it."""
    if isinstance(shape, BaseModel):
        print_json(dumped(shape))
    else:
        print_json([dumped(item) for item in shape])


def short_time(value: datetime | None) -> str:
    if value is None:
        return "-"
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def clip(text: str | None, width: int = 60) -> str:
    if not text:
        return ""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"
