"""The bundle of providers one pipeline run uses (real or offline)."""

from __future__ import annotations

from dataclasses import dataclass

from dominus.providers.data_sources import DataSources
from dominus.providers.dns import DnsChecker
from dominus.providers.models import ComparableSale, KeywordStats
from dominus.providers.rdap import RdapClient
from dominus.providers.trademarks import TrademarkSource


@dataclass(frozen=True)
class ProviderSet:
    dns: DnsChecker
    rdap: RdapClient
    trademarks: TrademarkSource
    keyword_data: dict[str, KeywordStats]
    comparable_sales: list[ComparableSale]
    is_sample: bool  # True when any fact comes from the bundled SAMPLE DATA; say so in output
    label: str  # shown in reports, e.g. "offline (SAMPLE DATA)"
    # What the keyword and sales figures came from (the files' formats and rows); None: the
    # offline files, described from `is_sample` and the counts.
    sources: DataSources | None = None
