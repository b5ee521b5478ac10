"""The providers' settings: which providers (`DOMINUS_PROVIDERS`), the DNS resolvers, RDAP and
WHOIS, and the data files (trademarks, keyword volumes, comparable sales). `ProviderSettings` is
a base class of the pipeline's settings (and so of `dominus.config.Settings`): a value out of
range stops start-up with the variable's name and the range."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from dominus.providers.rate_limits import parse_rate_limits
from dominus.settings_slice import SettingsSlice


class ProviderSettings(SettingsSlice):
    # `real`: DNS resolvers and RDAP over the network, and the data files below. `offline`: no
    # network: the data files below, availability unknown. `sample`: the bundled SAMPLE DATA
    # only (refused while a data file below is set: the two never mix). ADR 0044.
    DOMINUS_PROVIDERS: Literal["real", "offline", "sample"] = "real"
    # Comma-separated resolver addresses (`IP` or `IP:port`); two or more confirm "available".
    DNS_RESOLVERS: str = Field(default="1.1.1.1,8.8.8.8", min_length=1)
    DNS_TIMEOUT_MS: int = Field(default=2000, ge=50, le=60_000)
    DNS_CONCURRENCY: int = Field(default=16, ge=1, le=256)
    # A snapshot of IANA's RDAP bootstrap ships with DOMINUS; `dominus rdap refresh` updates it.
    RDAP_BOOTSTRAP_PATH: str | None = None
    RDAP_CONCURRENCY: int = Field(default=4, ge=1, le=64)
    # Bounds each attempt's whole exchange (connect, answer, redirects), not each read.
    RDAP_TIMEOUT_MS: int = Field(default=10_000, ge=100, le=120_000)
    RDAP_MAX_ATTEMPTS: int = Field(default=3, ge=1, le=10)
    # TLD → WHOIS server, asked (port 43) for TLDs the RDAP bootstrap has no service for. A dated
    # snapshot ships with DOMINUS; this points at another file in its format.
    WHOIS_SERVERS_PATH: str | None = None
    # How often each RDAP and WHOIS server may be asked, over the bundled dated table
    # (providers/data/server_rate_limits.csv): `host=N/s`, `N/min`, `N/h` or `N/<n>s`, comma-
    # separated; `*=N/s` for every server not named. Lookups wait their turn at the server.
    PROVIDER_RATE_LIMITS: str = ""
    # CSV `mark,owner,registry,classes[,number]` (`dominus marks import` writes one from the
    # USPTO's or EUIPO's bulk files). Unset: ./data/trademark_marks.csv when that import wrote
    # it; else no source, so every candidate is `unverified` and none is recommended (real and
    # offline providers alike; the sample has its own marks).
    TRADEMARK_MARKS_PATH: str | None = None
    # CSV keyword,monthly_volume,cpc, or a Google Ads Keyword Planner download as saved
    # (docs/data-sources.md).
    KEYWORD_DATA_PATH: str | None = None
    # CSV domain,price,currency,sale_date,venue, or a NameBio export / marketplace sold report
    # as saved (docs/data-sources.md).
    COMPS_DATA_PATH: str | None = None

    @field_validator("PROVIDER_RATE_LIMITS")
    @classmethod
    def _rate_limits_parse(cls, value: str) -> str:
        parse_rate_limits(value)  # raises ValueError naming the entry
        return value
