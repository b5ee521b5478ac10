"""The value model's figures on the portfolio's own sales, by the valuation's metrics module.

Each sample whose score carried the value model's ranges (`inputs.value`, kept by the snapshot)
is measured with the range of its sale's venue class (a marketplace sale against the retail
range, an auction or an unknown venue against the wholesale one), exactly as
`dominus valuation evaluate` measures a sales file, so the two reports read alike."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dominus.backtest.samples import Sample
from dominus.domain_names import split_domain
from dominus.valuation.metrics import Prediction, evaluate
from dominus.valuation.tlds import tld_group
from dominus.valuation.venues import venue_class


def value_prediction(sample: Sample) -> Prediction | None:
    """The sample's value range for its venue class; None when its score had no value ranges
    (scored before the value model, or by a model that could not value the name)."""
    ranges = sample.inputs.get("value")
    if not isinstance(ranges, Mapping):
        return None
    venue = venue_class(str(sample.inputs.get("venue") or ""))
    chosen = ranges.get(venue.value)
    if not isinstance(chosen, Mapping):
        return None
    try:
        p10, p50, p90 = (float(chosen[key]) for key in ("p10", "p50", "p90"))
    except (KeyError, TypeError, ValueError):
        return None
    if min(p10, p50, p90) <= 0:
        return None
    return Prediction(
        domain=sample.domain,
        realised=sample.realised,
        p10=p10,
        p50=p50,
        p90=p90,
        venue_class=venue.value,
        tld_group=tld_group(split_domain(sample.domain)[1]).value,
    )


def value_model_figures(samples: Sequence[Sample]) -> dict[str, Any]:
    """`{"sample_size", "left_out", "overall", "by_band", "by_venue_class", "by_tld_group"}`."""
    predictions = [p for p in (value_prediction(sample) for sample in samples) if p is not None]
    return {
        "sample_size": len(predictions),
        "left_out": len(samples) - len(predictions),
        **evaluate(predictions).to_dict(),
    }
