from __future__ import annotations

from datetime import date

from dominus.valuation.model import BUNDLED_MODEL_PATH, read_model

TODAY = date(2024, 3, 1)


def test_the_bundled_model_does_not_appraise_a_30m_name_at_the_old_anchor() -> None:
    # voice.com sold for $30M in 2019: a value model must put it far above the $500 anchor
    # every short clean .com got before (the expectation is an order of magnitude, not a fit)
    model = read_model(BUNDLED_MODEL_PATH)
    appraisal = model.appraise("voice.com", today=TODAY)
    assert appraisal.retail.p50 >= 100_000
    assert appraisal.wholesale.p50 > 500
    assert appraisal.model.trained_on
