"""The closeout CSV's optional `price` column: the listing's asking price, validated at its line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from dominus.pipeline.closeout_csv import read_closeout_csv
from dominus.pipeline.model import CloseoutDomain, RunInput
from dominus.providers.errors import ProviderDataError
from dominus.providers.offline import SAMPLE_INPUT_PATH


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "closeouts.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_prices_are_read_and_optional(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "domain,age,backlinks,wayback,price\n"
        "oldgardentools.com,17.5,340,210,1850\n"
        "quietkitchen.net,4,,,\n"
        "free.org,,,,0\n"
        "cents.io,,,,12.50\n"
        "top.com,,,,1e9\n",
    )
    assert [(entry.domain, entry.price) for entry in read_closeout_csv(path)] == [
        ("oldgardentools.com", 1850.0),
        ("quietkitchen.net", None),
        ("free.org", 0.0),
        ("cents.io", 12.5),
        ("top.com", 1e9),
    ]


def test_the_price_column_may_come_alone_and_in_any_order(tmp_path: Path) -> None:
    path = write(tmp_path, "price,domain\n300,bikecommuter.org\n")
    assert read_closeout_csv(path) == [CloseoutDomain(domain="bikecommuter.org", price=300.0)]


@pytest.mark.parametrize(
    ("price", "problem"),
    [
        ("-1", "price '-1' must be a finite, non-negative number"),
        ("nan", "price 'nan' must be a finite, non-negative number"),
        ("inf", "price 'inf' must be a finite, non-negative number"),
        ("1000000000.01", "price '1000000000.01' must be at most 1,000,000,000"),
        ("1e12", "price '1e12' must be at most 1,000,000,000"),
        ('"$1,200"', "price '$1,200' is not a number"),
        ("cheap", "price 'cheap' is not a number"),
    ],
)
def test_a_bad_price_is_one_line_naming_file_line_and_value(
    tmp_path: Path, price: str, problem: str
) -> None:
    path = write(tmp_path, f"domain,price\nok.com,10\nbad.com,{price}\n")
    with pytest.raises(ProviderDataError) as caught:
        read_closeout_csv(path)
    message = caught.value.message
    assert message == f"{path}, line 3: {problem}"
    assert "\n" not in message


@pytest.mark.parametrize("price", [-0.01, 1e9 + 1, float("nan"), float("inf"), True, "12"])
def test_the_model_refuses_what_the_csv_refuses(price: object) -> None:
    """The API and JSON input meet the same bounds (and, strict, no strings or booleans)."""
    with pytest.raises(ValidationError):
        CloseoutDomain.model_validate({"domain": "a.com", "price": price})


def test_the_sample_closeouts_carry_prices() -> None:
    sample = RunInput.model_validate(json.loads(SAMPLE_INPUT_PATH.read_text(encoding="utf-8")))
    prices = {entry.domain: entry.price for entry in sample.closeout}
    assert prices["oldgardentools.com"] == 1850
    assert prices["insurance.com"] is None  # a listing without a price
