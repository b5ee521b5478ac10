"""What domain handlers are built with."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import Engine

from dominus.config import Settings
from dominus.jobs.clock import Clock
from dominus.notify import Notifier, notifier_from_settings


@dataclass(frozen=True)
class HandlerDependencies:
    settings: Settings
    engine: Engine
    clock: Clock
    # The process's notifier; None: the one the settings configure (log, plus the webhook).
    notifier: Notifier | None = field(default=None)

    def notifications(self) -> Notifier:
        return self.notifier or notifier_from_settings(self.settings)
