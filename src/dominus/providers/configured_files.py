"""The keyword and sales files the settings name (KEYWORD_DATA_PATH, COMPS_DATA_PATH), read with
what they were, for the appraisal to say where its figures came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dominus.providers.comparable_sales import read_comps_file
from dominus.providers.data_sources import NO_SOURCE, DataSource
from dominus.providers.keyword_data import read_keyword_file
from dominus.providers.models import ComparableSale, KeywordStats
from dominus.providers.settings import ProviderSettings


@dataclass(frozen=True)
class Keywords:
    stats: dict[str, KeywordStats] = field(default_factory=dict)
    source: DataSource = NO_SOURCE


@dataclass(frozen=True)
class Comps:
    sales: list[ComparableSale] = field(default_factory=list)
    source: DataSource = NO_SOURCE


def configured_keywords(settings: ProviderSettings) -> Keywords:
    if not settings.KEYWORD_DATA_PATH:
        return Keywords()
    found = read_keyword_file(Path(settings.KEYWORD_DATA_PATH))
    return Keywords(
        found.stats, DataSource("file", found.format, found.rows, settings.KEYWORD_DATA_PATH)
    )


def configured_comps(settings: ProviderSettings) -> Comps:
    if not settings.COMPS_DATA_PATH:
        return Comps()
    found = read_comps_file(Path(settings.COMPS_DATA_PATH))
    return Comps(
        found.sales, DataSource("file", found.format, found.rows, settings.COMPS_DATA_PATH)
    )
