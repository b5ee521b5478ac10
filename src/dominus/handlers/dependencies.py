"""What domain handlers are built with."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine

from dominus.config import Settings
from dominus.jobs.clock import Clock


@dataclass(frozen=True)
class HandlerDependencies:
    settings: Settings
    engine: Engine
    clock: Clock
