"""The value model in the pipeline: each candidate appraised (wholesale and retail ranges) with
the providers' comparable sales as evidence, before the scoring engine decides on it. The score
stage and the single-domain appraisal both value names here, so an appraisal values a name
exactly as a run would.

The model values in US dollars; comparable sales in another currency are left out of its
evidence (there is no exchange rate to trust), and scoring in another currency keeps the anchor
formula's values (`scoring/engine.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from dominus.providers.models import ComparableSale
from dominus.valuation import Appraisal, ComparablesIndex, Sale, ValueModel


class Valuer:
    """One model and one index of past sales, built once per run or appraiser."""

    def __init__(self, model: ValueModel, sales: Sequence[ComparableSale]) -> None:
        self.model = model
        evidence = [
            Sale(sale.domain, sale.price, sale.sale_date, sale.venue)
            for sale in sales
            if sale.currency.upper() == "USD" and sale.price > 0
        ]
        self.comparables = ComparablesIndex(evidence) if evidence else None

    def appraise(self, domains: Sequence[str], today: date) -> dict[str, Appraisal]:
        """Each name's appraisal, in one pass over all of them."""
        found = self.model.appraise_many(list(domains), self.comparables, today)
        return {domain: appraisal for domain, appraisal in zip(domains, found, strict=True)}
