"""From the settings to the providers a run, a poll or an appraisal uses.

Three kinds (ADR 0044). `real`: DNS, RDAP and WHOIS over the network, and the user's data files
(TRADEMARK_MARKS_PATH, KEYWORD_DATA_PATH, COMPS_DATA_PATH). `offline`: no network: the same
user's files, availability unknown. `sample`: the bundled SAMPLE DATA for everything, never
beside the user's files (`check_provider_choice` refuses the mix).

Every RDAP and WHOIS request of the real providers waits at a rate gate (`rate_gate.py`): the
one the caller passes (a worker's, shared by its jobs), else one of their own, held to the
bundled table and PROVIDER_RATE_LIMITS."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from dominus import __version__
from dominus.providers.configured_files import configured_comps, configured_keywords
from dominus.providers.data_sources import DataSources
from dominus.providers.dns import ResolverDnsChecker
from dominus.providers.errors import ProviderError
from dominus.providers.marks_import import marks_path
from dominus.providers.models import Mark
from dominus.providers.offline import NoNetworkAvailability, offline_providers
from dominus.providers.rate_gate import InProcessRateGate, RateGate
from dominus.providers.rate_limits import RateLimits
from dominus.providers.rdap import HttpRdapClient
from dominus.providers.rdap_bootstrap import BUNDLED_BOOTSTRAP_PATH, RdapBootstrap
from dominus.providers.sets import ProviderSet
from dominus.providers.settings import ProviderSettings
from dominus.providers.trademarks import MarksFileSource, TrademarkSource
from dominus.providers.whois import WhoisClient
from dominus.providers.whois_servers import BUNDLED_WHOIS_SERVERS_PATH, WhoisServers

# Where `dominus rdap refresh` writes when RDAP_BOOTSTRAP_PATH is unset, and where a refreshed
# copy is found: next to the default database, never inside the installed package.
REFRESHED_BOOTSTRAP_PATH = Path("data") / "rdap_dns_bootstrap.json"


class NoTrademarkSource:
    """No marks file configured: every candidate is `unverified` (never recommended)."""

    def marks(self) -> list[Mark] | None:
        return None


def bootstrap_path(settings: ProviderSettings) -> Path:
    if settings.RDAP_BOOTSTRAP_PATH:
        return Path(settings.RDAP_BOOTSTRAP_PATH)
    if REFRESHED_BOOTSTRAP_PATH.exists():
        return REFRESHED_BOOTSTRAP_PATH
    return BUNDLED_BOOTSTRAP_PATH


def whois_servers_path(settings: ProviderSettings) -> Path:
    if settings.WHOIS_SERVERS_PATH:
        return Path(settings.WHOIS_SERVERS_PATH)
    return BUNDLED_WHOIS_SERVERS_PATH


OFFLINE = "offline"
REAL = "real"
SAMPLE = "sample"
# The settings naming the user's own data files, which the sample never stands in for.
USER_FILE_SETTINGS = ("TRADEMARK_MARKS_PATH", "KEYWORD_DATA_PATH", "COMPS_DATA_PATH")


class ProviderChoiceError(ProviderError):
    """These providers cannot serve what was asked of them."""


def check_provider_choice(settings: ProviderSettings, kind: str | None = None) -> None:
    """Refuses the bundled sample while a user's data file is set: a report from the two mixed
    would be neither sample nor the user's, and using one silently drops the other."""
    if (kind or settings.DOMINUS_PROVIDERS) != SAMPLE:
        return
    named = [name for name in USER_FILE_SETTINGS if getattr(settings, name)]
    if named:
        raise ProviderChoiceError(
            "the bundled sample data never mixes with your files: "
            f"{' and '.join(named)} {'is' if len(named) == 1 else 'are'} set; unset "
            f"{'it' if len(named) == 1 else 'them'} to use the sample, or use "
            "DOMINUS_PROVIDERS=offline (your files, no network) without --sample"
        )


def rate_gate(settings: ProviderSettings) -> InProcessRateGate:
    """A gate for this process, held to the bundled table and PROVIDER_RATE_LIMITS."""
    return InProcessRateGate(RateLimits.load(settings.PROVIDER_RATE_LIMITS))


@contextmanager
def open_providers(
    settings: ProviderSettings, kind: str | None = None, *, gate: RateGate | None = None
) -> Iterator[ProviderSet]:
    """The providers of `kind` ("real", "offline" or "sample"; default DOMINUS_PROVIDERS), for
    one run: a run records its kind when it is created, so whichever worker picks it up uses
    the same providers. Their network clients are closed when the run is over. Their RDAP and
    WHOIS requests wait at `gate` (default: a new `rate_gate(settings)`)."""
    chosen = kind or settings.DOMINUS_PROVIDERS
    if chosen == SAMPLE:
        yield offline_providers()
        return
    if chosen == OFFLINE:
        yield _no_network_providers(settings)
        return
    # Redirects are followed by the RDAP client itself, under bounded_http's rule (never to
    # another scheme or inwards); each exchange's timeouts come from its own deadline.
    with httpx.Client(
        follow_redirects=False,
        headers={"User-Agent": f"dominus/{__version__}"},
        timeout=settings.RDAP_TIMEOUT_MS / 1000,
    ) as client:
        yield _real_providers(settings, client, gate if gate is not None else rate_gate(settings))


def _real_providers(
    settings: ProviderSettings, client: httpx.Client, gate: RateGate
) -> ProviderSet:
    resolvers = [part.strip() for part in settings.DNS_RESOLVERS.split(",") if part.strip()]
    keywords, comps = configured_keywords(settings), configured_comps(settings)
    return ProviderSet(
        dns=ResolverDnsChecker(resolvers, settings.DNS_TIMEOUT_MS / 1000),
        rdap=HttpRdapClient(
            RdapBootstrap.load(bootstrap_path(settings)),
            client,
            settings.RDAP_TIMEOUT_MS / 1000,
            max_attempts=settings.RDAP_MAX_ATTEMPTS,
            # Same timeout and attempts; the RDAP stage's RDAP_CONCURRENCY bounds both.
            whois=WhoisClient(
                WhoisServers.load(whois_servers_path(settings)),
                settings.RDAP_TIMEOUT_MS / 1000,
                max_attempts=settings.RDAP_MAX_ATTEMPTS,
                gate=gate,
            ),
            gate=gate,
        ),
        trademarks=trademark_source(settings),
        keyword_data=keywords.stats,
        comparable_sales=comps.sales,
        is_sample=False,
        label="real (DNS, RDAP, WHOIS)",
        sources=DataSources(keywords=keywords.source, comps=comps.source),
    )


def _no_network_providers(settings: ProviderSettings) -> ProviderSet:
    availability = NoNetworkAvailability()
    keywords, comps = configured_keywords(settings), configured_comps(settings)
    return ProviderSet(
        dns=availability,
        rdap=availability,
        trademarks=trademark_source(settings),
        keyword_data=keywords.stats,
        comparable_sales=comps.sales,
        is_sample=False,
        label="offline (your data files, availability unknown)",
        sources=DataSources(keywords=keywords.source, comps=comps.source),
    )


def trademark_source(settings: ProviderSettings) -> TrademarkSource:
    marks = marks_path(settings)
    return MarksFileSource(marks) if marks is not None else NoTrademarkSource()
