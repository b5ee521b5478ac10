"""The value model: what a domain name is worth, wholesale and retail, each as a P10–P90 range.

Public entry points (typed, documented in their modules):
    load_model(path | None) -> ValueModel            model.py (None: VALUATION_MODEL_PATH, or
                                                     the bundled model)
    ValueModel.appraise(domain, comparables, today)  -> Appraisal (wholesale, retail, contributions,
                                                        comparables, model)
    ValueModel.appraise_many(domains, ...)           the same for many names at once
    ComparablesIndex(sales)                          comparables.py: past sales as evidence
    read_sales(path) -> list[Sale]                   sales.py: a sales CSV, both header forms
    venue_class(venue) -> VenueClass                 venues.py: the one venue → class mapping
    evaluate(predictions) -> Report                  metrics.py: the figures, shared with backtests
    fit_model(sales, ...) / measure(model, sales, …) fitting.py

This package imports only the standard library, numpy, wordninja, wordfreq and dominus.errors.
"""

from dominus.valuation.comparables import ComparablesIndex, UsedComparable
from dominus.valuation.metrics import Prediction, Report, evaluate
from dominus.valuation.model import (
    Appraisal,
    Contribution,
    ModelInfo,
    Range,
    ValueModel,
    load_model,
)
from dominus.valuation.sales import Sale, SalesFileError, read_sales
from dominus.valuation.venues import VenueClass, venue_class

__all__ = [
    "Appraisal",
    "ComparablesIndex",
    "Contribution",
    "ModelInfo",
    "Prediction",
    "Range",
    "Report",
    "Sale",
    "SalesFileError",
    "UsedComparable",
    "ValueModel",
    "VenueClass",
    "evaluate",
    "load_model",
    "read_sales",
    "venue_class",
]
