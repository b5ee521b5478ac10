"""Fitting from sales files with a hold-out, as `dominus valuation fit` and the bundled model's
refit do it: each source's held-out part measures the model fitted on all the sources' other
parts, beside both baselines fitted on the same rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from dominus.valuation.comparables import ComparablesIndex
from dominus.valuation.fitting import (
    FitOptions,
    Fitted,
    fit_model,
    measure,
    split_by_date,
    split_stratified,
)
from dominus.valuation.metrics import Report
from dominus.valuation.sales import Sale

BY_DATE = "date"
BY_SEED = "seed"


@dataclass
class SalesSource:
    """One file of sales: its name (in the model's provenance), its rows, the weight of each of
    its rows in the fit, and how its hold-out is chosen (latest by date, or at random by seed,
    the same share of each price band)."""

    name: str
    sales: list[Sale]
    weight: float = 1.0
    split: str = BY_DATE
    seed: int = 7


@dataclass
class HoldoutResult:
    fitted: Fitted
    reports: dict[str, dict[str, Report]] = field(default_factory=dict)  # source → three reports
    held_out: dict[str, int] = field(default_factory=dict)


def split(source: SalesSource, holdout: float) -> tuple[list[Sale], list[Sale]]:
    if holdout <= 0:
        return list(source.sales), []
    if source.split == BY_SEED:
        return split_stratified(source.sales, holdout, source.seed)
    return split_by_date(source.sales, holdout)


def fit_with_holdout(
    sources: Sequence[SalesSource],
    holdout: float,
    options: FitOptions | None = None,
    version: str = "1",
) -> HoldoutResult:
    """Fit on every source's training part; measure on each source's held-out part."""
    train: list[Sale] = []
    weights: list[float] = []
    tests: dict[str, list[Sale]] = {}
    for source in sources:
        kept, held = split(source, holdout)
        train += kept
        weights += [source.weight] * len(kept)
        tests[source.name] = held
    fitted = fit_model(
        train, weights, options, version=version, sources=[source.name for source in sources]
    )
    result = HoldoutResult(fitted)
    index = ComparablesIndex(
        train,
        half_life_years=fitted.model.comparables_term.half_life_years,
        k=fitted.model.comparables_term.k,
    )
    for name, held in tests.items():
        if held:
            result.reports[name] = measure(fitted.model, held, index)
            result.held_out[name] = len(held)
    fitted.model.metrics = metrics_document(result, holdout)
    return result


def metrics_document(result: HoldoutResult, holdout: float) -> dict[str, Any]:
    return {
        "holdout": holdout,
        "measured_on": date.today().isoformat(),
        "held_out_rows": result.held_out,
        "by_source": {
            source: {name: report.to_dict() for name, report in reports.items()}
            for source, reports in result.reports.items()
        },
    }
