from __future__ import annotations

import json
from dataclasses import replace
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from dominus.valuation.fitting import FitOptions, fit_model, split_stratified
from dominus.valuation.metrics import price_band
from dominus.valuation.model import ALL_FEATURES, ValueModel, read_model
from dominus.valuation.sales import Sale
from dominus.valuation.venues import VenueClass
from tests.support.made_up_sales import made_up_sales

TODAY = date(2024, 3, 1)
NAMES = ["river.com", "stonenest.io", "48213.xyz", "pixel-7.org"]


def _fit(retail_weight: float, options: FitOptions) -> ValueModel:
    sales = made_up_sales()
    weights = [retail_weight if s.venue_class is VenueClass.RETAIL else 1.0 for s in sales]
    return fit_model(sales, weights, options).model


def test_heavy_retail_sales_move_the_retail_values_but_not_the_wholesale_ones() -> None:
    # The base is fitted on capped weights, the retail head alone sees the full ones: however
    # heavy the retail sales are, the wholesale values stay as the base made them
    options = FitOptions(folds=3, use_comparables=False, retail_head=True)
    light, heavy = _fit(1.0, options), _fit(30.0, options)
    for one, other in zip(
        light.appraise_many(NAMES, today=TODAY),
        heavy.appraise_many(NAMES, today=TODAY),
        strict=True,
    ):
        assert other.wholesale.p50 == pytest.approx(one.wholesale.p50, rel=1e-9)
    assert light.weights["retail"] != heavy.weights["retail"]


def test_without_the_head_heavy_retail_sales_move_the_wholesale_values_too() -> None:
    options = FitOptions(folds=3, use_comparables=False, retail_head=False)
    light, heavy = _fit(1.0, options), _fit(30.0, options)
    moved = [
        abs(one.wholesale.p50 / other.wholesale.p50 - 1.0)
        for one, other in zip(
            light.appraise_many(NAMES, today=TODAY),
            heavy.appraise_many(NAMES, today=TODAY),
            strict=True,
        )
    ]
    assert max(moved) > 1e-3


def test_the_retail_stretch_scales_the_wholesale_value_around_its_pivot() -> None:
    model = _fit(1.0, FitOptions(folds=3, use_comparables=False, retail_stretch=False))
    assert model.retail_stretch == 0.0
    stretched = replace(model, retail_stretch=0.5, stretch_pivot=6.0)
    wholesale_x = model.design(NAMES, [VenueClass.WHOLESALE] * len(NAMES))
    retail_x = model.retail_design(wholesale_x)
    wholesale = model.base_log(wholesale_x)
    assert np.allclose(stretched.base_log(wholesale_x), wholesale)  # wholesale rows: no stretch
    expected = model.base_log(retail_x) + 0.5 * (wholesale - 6.0)
    assert np.allclose(stretched.base_log(retail_x), expected)
    # the explanation adds up to the retail log value: intercept, the groups' parts, and the
    # stretch of the intercept around the pivot (in the venue's part)
    parts = stretched._parts(retail_x)
    assert np.allclose(parts.sum(axis=1) + stretched.intercept, expected)
    appraisal = stretched.appraise(NAMES[0], today=TODAY)
    assert appraisal.retail.p50 > 0


def test_the_stretch_is_saved_and_an_older_file_without_it_loads_as_none(tmp_path: Path) -> None:
    model = replace(
        _fit(1.0, FitOptions(folds=3, use_comparables=False)),
        retail_stretch=0.25,
        stretch_pivot=5.5,
    )
    path = tmp_path / "model.json"
    model.save(path)
    loaded = read_model(path)
    assert (loaded.retail_stretch, loaded.stretch_pivot) == (0.25, 5.5)
    older = json.loads(path.read_text())
    del older["retail_stretch"]
    path.write_text(json.dumps(older))
    assert read_model(path).retail_stretch == 0.0


def test_a_stratified_hold_out_takes_the_same_share_of_every_price_band() -> None:
    prices = [500.0] * 8 + [5_000.0] * 4 + [50_000.0] * 4 + [500_000.0] * 8
    sales = [
        Sale(f"name{i}.com", price, date(2020, 1, 1), "Sedo") for i, price in enumerate(prices)
    ]
    kept, apart = split_stratified(sales, 0.25, seed=5)
    bands = [price_band(sale.price) for sale in apart]
    assert sorted(bands) == sorted(["< $2k"] * 2 + ["$2k–20k", "$20k–200k"] + ["≥ $200k"] * 2)
    assert len(kept) + len(apart) == len(sales)
    assert split_stratified(sales, 0.25, seed=5)[1] == apart  # the same seed, the same part
    assert "retail" in ALL_FEATURES
