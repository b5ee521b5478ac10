from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from dominus.valuation.sales import SalesFileError, parse_sales, read_sales


def test_the_projects_header() -> None:
    sales = parse_sales(["domain,price,date,venue,source", "Cloud.com,1200,2024-01-02,Sedo,x"])
    assert sales[0].domain == "cloud.com"
    assert sales[0].price == 1200.0
    assert sales[0].date == date(2024, 1, 2)
    assert sales[0].venue == "Sedo"
    assert sales[0].source == "x"


def test_namebios_export_header_and_price_format(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_text(
        '\ufeff"Domain","Price","Date","Venue"\n"nest.io","$1,250","2024-09-17","GoDaddy"\n'
    )
    sales = read_sales(path)
    assert (sales[0].domain, sales[0].price, sales[0].venue) == ("nest.io", 1250.0, "GoDaddy")


def test_price_usd_and_blank_lines() -> None:
    sales = parse_sales(["domain,price_usd,date,venue", "", "a.com,100,2024-01-01,GoDaddy", ""])
    assert len(sales) == 1


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("a.com,abc,2024-01-01,Sedo", "line 3: price 'abc' is not a number"),
        ("a.com,-5,2024-01-01,Sedo", "line 3: price '-5' is not a positive amount"),
        ("a.com,10,01/02/2024,Sedo", "line 3: date '01/02/2024' is not a date"),
        ("nodot,10,2024-01-01,Sedo", "line 3: domain 'nodot' is not a domain name"),
    ],
)
def test_a_bad_row_is_one_line_with_its_line_number(row: str, message: str) -> None:
    lines = ["domain,price,date,venue", "ok.com,10,2024-01-01,Sedo", row]
    with pytest.raises(SalesFileError) as raised:
        parse_sales(lines, "sales.csv")
    assert raised.value.message.startswith("sales.csv " + message)
    assert "\n" not in raised.value.message


def test_a_header_without_the_columns_and_an_empty_file(tmp_path: Path) -> None:
    with pytest.raises(SalesFileError, match="line 1: the header lacks price, venue"):
        parse_sales(["domain,date"], "f.csv")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(SalesFileError, match="empty file"):
        read_sales(empty)
    with pytest.raises(SalesFileError, match="no such file"):
        read_sales(tmp_path / "missing.csv")
