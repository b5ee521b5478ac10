"""The renewal alerts' thresholds (`RenewalSettings`, a base class of `dominus.config.Settings`):
an entry renewing within RENEWAL_WARNING_DAYS is imminent (a warning), within
RENEWAL_CRITICAL_DAYS critical, and on or after its renewal date past due (both critical)."""

from __future__ import annotations

from pydantic import Field

from dominus.errors import ConfigurationError
from dominus.settings_slice import SettingsSlice


class RenewalSettings(SettingsSlice):
    RENEWAL_CRITICAL_DAYS: int = Field(default=7, ge=0, le=365)
    RENEWAL_WARNING_DAYS: int = Field(default=30, ge=1, le=730)


def check_renewal_settings(settings: RenewalSettings) -> None:
    if settings.RENEWAL_CRITICAL_DAYS >= settings.RENEWAL_WARNING_DAYS:
        raise ConfigurationError(
            "invalid settings: RENEWAL_CRITICAL_DAYS must be smaller than RENEWAL_WARNING_DAYS "
            f"(got {settings.RENEWAL_CRITICAL_DAYS} >= {settings.RENEWAL_WARNING_DAYS})"
        )
