"""The two baselines every evaluation reports beside the model, fitted on the model's own
training sales (their aggregates are stored in the model file, so `evaluate` on any file
compares the three on equal terms).

naive          the median price of past sales with the same TLD group and label-length bucket
               (P10 and P90: that cell's 10th and 90th percentiles). A cell with fewer than
               `MIN_CELL` sales falls back to its TLD group, then to all sales.
comparables    the comparable sales alone (comparables.py's nearest sales, recency-weighted):
               P50 = exp((Σ w ln price + k0 × m) ÷ (Σ w + k0)), m the mean log price of the
               venue class in training; P10/P90 from its leave-one-out residual quantiles.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import numpy as np

from dominus.valuation.comparables import ComparablesIndex
from dominus.valuation.sales import Sale
from dominus.valuation.tlds import split_domain, tld_group

LENGTH_BUCKETS: tuple[tuple[str, int, int], ...] = (
    ("1-3", 1, 3),
    ("4", 4, 4),
    ("5", 5, 5),
    ("6-7", 6, 7),
    ("8-10", 8, 10),
    ("11-14", 11, 14),
    ("15+", 15, 10_000),
)
MIN_CELL = 5
Triple = tuple[float, float, float]


def length_bucket(label: str) -> str:
    for name, low, high in LENGTH_BUCKETS:
        if low <= len(label) <= high:
            return name
    return LENGTH_BUCKETS[-1][0]


def _quantiles(prices: Sequence[float]) -> list[float]:
    values = np.quantile(np.asarray(prices, dtype=float), [0.1, 0.5, 0.9])
    return [float(value) for value in values]


@dataclass
class NaiveBaseline:
    cells: dict[str, list[float]]  # "group|bucket" → [n, p10, p50, p90]
    groups: dict[str, list[float]]
    overall: list[float]

    @classmethod
    def fit(cls, sales: Sequence[Sale]) -> NaiveBaseline:
        cells: dict[str, list[float]] = {}
        groups: dict[str, list[float]] = {}
        for sale in sales:
            label, tld = split_domain(sale.domain)
            group = tld_group(tld).value
            cells.setdefault(f"{group}|{length_bucket(label)}", []).append(sale.price)
            groups.setdefault(group, []).append(sale.price)
        return cls(
            cells={key: [len(v), *_quantiles(v)] for key, v in cells.items() if len(v) >= MIN_CELL},
            groups={
                key: [len(v), *_quantiles(v)] for key, v in groups.items() if len(v) >= MIN_CELL
            },
            overall=[len(sales), *_quantiles([sale.price for sale in sales])],
        )

    def predict(self, domain: str) -> Triple:
        label, tld = split_domain(domain)
        group = tld_group(tld).value
        cell = self.cells.get(f"{group}|{length_bucket(label)}") or self.groups.get(group)
        _, p10, p50, p90 = cell or self.overall
        return p10, p50, p90

    def to_dict(self) -> dict[str, Any]:
        return {"cells": self.cells, "groups": self.groups, "overall": self.overall}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NaiveBaseline:
        return cls(dict(data["cells"]), dict(data["groups"]), list(data["overall"]))


@dataclass
class ComparablesBaseline:
    pseudo_weight: float
    class_means: dict[str, float]
    low: dict[str, float]
    high: dict[str, float]
    k: int = 5

    def predict_log(
        self,
        domain: str,
        venue_class: str,
        index: ComparablesIndex | None,
        today: date,
        exclude: int | None = None,
    ) -> float:
        prior = self.class_means.get(venue_class, min(self.class_means.values()))
        if index is None or not len(index):
            return prior
        found = index.nearest(domain, today, exclude=exclude, k=self.k)
        total = sum(weight for _, _, weight in found)
        weighted = sum(weight * index.log_price(position) for position, _, weight in found)
        return (weighted + self.pseudo_weight * prior) / (total + self.pseudo_weight)

    def predict(
        self, domain: str, venue_class: str, index: ComparablesIndex | None, today: date
    ) -> Triple:
        center = self.predict_log(domain, venue_class, index, today)
        return (
            math.exp(center + self.low.get(venue_class, -1.0)),
            math.exp(center),
            math.exp(center + self.high.get(venue_class, 1.0)),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "pseudo_weight": self.pseudo_weight,
            "class_means": self.class_means,
            "low": self.low,
            "high": self.high,
            "k": self.k,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ComparablesBaseline:
        return cls(
            float(data["pseudo_weight"]),
            dict(data["class_means"]),
            dict(data["low"]),
            dict(data["high"]),
            int(data.get("k", 5)),
        )
