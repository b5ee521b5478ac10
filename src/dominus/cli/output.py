"""Printing: JSON documents to stdout, tables and messages through Rich."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from typing import Any

from rich.console import Console

console = Console(highlight=False, soft_wrap=True)
errors = Console(stderr=True, highlight=False, soft_wrap=True)


def print_json(document: Any) -> None:
    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def short_time(value: datetime | None) -> str:
    if value is None:
        return "-"
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def clip(text: str | None, width: int = 60) -> str:
    if not text:
        return ""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"
