from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from dominus.valuation.comparables import ComparablesIndex
from dominus.valuation.fitting import FitOptions, fit_model, measure, split_by_date
from dominus.valuation.model import (
    ModelFileError,
    ValueModel,
    load_model,
    read_model,
)
from dominus.valuation.sales import Sale
from dominus.valuation.venues import VenueClass
from tests.support.made_up_sales import made_up_sales

TODAY = date(2024, 3, 1)


@pytest.fixture(scope="module")
def fitted() -> ValueModel:
    sales = made_up_sales()
    return fit_model(sales, options=FitOptions(folds=3), sources=["made-up"]).model


def test_the_model_learns_the_made_up_rule(fitted: ValueModel) -> None:
    word, digits = fitted.appraise_many(["river.com", "48213.xyz"], today=TODAY)
    assert word.wholesale.p50 > digits.wholesale.p50
    assert word.retail.p50 > word.wholesale.p50  # retail venues sold dearer in the sales


def test_ranges_are_ordered_and_explained(fitted: ValueModel) -> None:
    appraisal = fitted.appraise("stonenest.com", today=TODAY)
    for value in (appraisal.wholesale, appraisal.retail):
        assert 0 < value.p10 <= value.p50 <= value.p90
    assert 0 < len(appraisal.contributions) <= 5
    assert all(item.label for item in appraisal.contributions)
    assert appraisal.model.name == "dominus-value"
    assert "made-up" in appraisal.model.trained_on


def test_save_and_load_round_trip(fitted: ValueModel, tmp_path: Path) -> None:
    path = tmp_path / "model.json"
    fitted.save(path)
    loaded = read_model(path)
    names = ["cloud.com", "pixel-7.org", "12345.de"]
    before = fitted.appraise_many(names, today=TODAY)
    after = loaded.appraise_many(names, today=TODAY)
    for old, new in zip(before, after, strict=True):
        for kind in ("wholesale", "retail"):
            old_range, new_range = getattr(old, kind), getattr(new, kind)
            assert new_range.p50 == pytest.approx(old_range.p50, rel=1e-6)
            assert new_range.p90 == pytest.approx(old_range.p90, rel=1e-6)
        assert [c.label for c in new.contributions] == [c.label for c in old.contributions]
    assert json.loads(path.read_text())["features"][0] == "len_1"


def test_comparables_are_used_and_reported(fitted: ValueModel) -> None:
    fitted.comparables_term.beta = 0.5  # whatever the made-up sales made of it
    past = [Sale("rivernest.com", 90_000.0, date(2024, 2, 1), "Sedo")]
    index = ComparablesIndex(past)
    appraisal = fitted.appraise("rivercloud.com", index, today=TODAY)
    assert [c.domain for c in appraisal.comparables] == ["rivernest.com"]
    assert "shares 'river'" in appraisal.comparables[0].why
    without = fitted.appraise("rivercloud.com", today=TODAY)
    assert appraisal.retail.p50 > without.retail.p50  # a dear comparable raises the value
    assert any(c.label.startswith("comparable sales") for c in appraisal.contributions)


def test_a_future_sale_is_never_a_comparable() -> None:
    index = ComparablesIndex([Sale("rivernest.com", 500.0, date(2025, 1, 1), "GoDaddy")])
    assert index.nearest("rivercloud.com", TODAY) == []
    assert index.nearest("rivercloud.com", date(2025, 1, 2)) != []


def test_measure_reports_the_model_and_both_baselines(fitted: ValueModel) -> None:
    train, test = split_by_date(made_up_sales(), 0.2)
    assert max(s.date for s in train) <= min(s.date for s in test)
    reports = measure(fitted, test, ComparablesIndex(train))
    assert set(reports) == {"model", "naive", "comparables"}
    assert reports["model"].overall.n == len(test)


def test_a_broken_model_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "model.json"
    path.write_text("{not json")
    with pytest.raises(ModelFileError, match="not a JSON model file"):
        read_model(path)
    path.write_text(json.dumps({"format": 99}))
    with pytest.raises(ModelFileError, match="model format 99"):
        read_model(path)


def test_valuation_model_path_selects_a_users_model(
    fitted: ValueModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "mine.json"
    fitted.version = "mine-1"
    fitted.save(path)
    monkeypatch.setenv("VALUATION_MODEL_PATH", str(path))
    assert load_model().version == "mine-1"


def test_the_retail_rows_derived_from_the_wholesale_ones_match_a_direct_design(
    fitted: ValueModel,
) -> None:
    # appraise_many derives the retail rows from the wholesale ones instead of recomputing
    # every feature; both ways must give the same matrix (length is capped at 30 in features)
    names = ["voice.com", "best-4you.net", "8364.com", "a" * 40 + ".io", "xn--bcher-kva.de"]
    wholesale = fitted.design(names, [VenueClass.WHOLESALE] * len(names))
    direct = fitted.design(names, [VenueClass.RETAIL] * len(names))
    assert (fitted.retail_design(wholesale) == direct).all()
