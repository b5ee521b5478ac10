"""The watchlist's settings, on top of the providers' it polls with (`WatchlistSettings`, a base
class of `dominus.config.Settings`)."""

from __future__ import annotations

from pydantic import Field

from dominus.providers.settings import ProviderSettings


class WatchlistSettings(ProviderSettings):
    # An entry checked less than this long ago is skipped by a poll (0: every poll checks all).
    WATCHLIST_POLL_INTERVAL_HOURS: float = Field(
        default=6.0, ge=0.0, le=8760.0, allow_inf_nan=False
    )
    # The pause between two RDAP lookups of one poll: registries rate-limit their RDAP servers.
    WATCHLIST_RDAP_DELAY_MS: int = Field(default=1000, ge=0, le=60_000)
