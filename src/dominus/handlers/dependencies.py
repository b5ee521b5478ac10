"""What domain handlers are built with."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import Engine

from dominus.config import Settings
from dominus.jobs.clock import Clock
from dominus.notify import Notifier, notifier_from_settings
from dominus.providers.rate_gate import RateGate
from dominus.providers.setup import rate_gate


@dataclass(frozen=True)
class HandlerDependencies:
    settings: Settings
    engine: Engine
    clock: Clock
    # The process's notifier; None: the one the settings configure (log, plus the webhook).
    notifier: Notifier | None = field(default=None)
    # The gate every RDAP and WHOIS request of this process's jobs waits at: one per process,
    # so that jobs running side by side share each server's rate. None: each job its own.
    provider_gate: RateGate | None = field(default=None)

    def notifications(self) -> Notifier:
        return self.notifier or notifier_from_settings(self.settings)

    def rate_gate(self) -> RateGate:
        return self.provider_gate or rate_gate(self.settings)
