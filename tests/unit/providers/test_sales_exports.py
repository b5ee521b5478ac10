"""Sales files as exported: a NameBio export (`domain,price_usd,date,venue`) and marketplace sold
reports, read as they are saved. Every name and figure here is invented."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from dominus.providers.comparable_sales import load_comparable_sales, read_comps_file
from dominus.providers.errors import ProviderDataError
from dominus.providers.sales_exports import CANONICAL, NAMEBIO, REPORT


def write(tmp_path: Path, text: str, encoding: str = "utf-8") -> Path:
    path = tmp_path / "sales.csv"
    path.write_bytes(text.encode(encoding))
    return path


def test_a_namebio_export_reads_as_saved(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "domain,price_usd,date,venue\r\n"
        "GlimmerKettle.com,1250,2024-09-20,GoDaddy\r\n"
        "quorbit.io,310,2024-10-01,Sedo\r\n",
    )
    found = read_comps_file(path)
    assert (found.format, found.rows) == (NAMEBIO, 2)
    first, second = found.sales
    assert (first.domain, first.price, first.currency) == ("glimmerkettle.com", 1250.0, "USD")
    assert (first.sale_date, first.venue) == (date(2024, 9, 20), "GoDaddy")
    assert (second.domain, second.venue) == ("quorbit.io", "Sedo")


def test_a_sold_report_with_its_own_column_names_and_extra_columns(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "Domain Name\tSale Price\tCurrency\tSold Date\tMarketplace\tCommission\n"
        "zentrixboots.com\t€2,400.00\tEUR\t2023-05-04 13:20:00\tDan\t360\n",
        encoding="utf-16",
    )
    found = read_comps_file(path)
    assert found.format == REPORT
    (sale,) = found.sales
    assert (sale.domain, sale.price, sale.currency) == ("zentrixboots.com", 2400.0, "EUR")
    assert (sale.sale_date, sale.venue) == (date(2023, 5, 4), "Dan")


def test_a_report_naming_the_currency_on_each_price(tmp_path: Path) -> None:
    path = write(tmp_path, "domain,price,date\nvelmora.net,$99,2022-01-02\n")
    (sale,) = load_comparable_sales(path)
    assert (sale.price, sale.currency, sale.venue) == (99.0, "USD", "")


def test_dominus_csv_is_still_strict(tmp_path: Path) -> None:
    path = write(tmp_path, "domain,price,currency,sale_date\nvelmora.net,99,usd,2022-01-02\n")
    found = read_comps_file(path)
    assert found.format == CANONICAL
    assert found.sales[0].currency == "USD"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("domain,price,date\nvelmora.net,99,2022-01-02\n", "line 2: no currency"),
        ("domain,price_usd,date,venue\nvelmora.net,lots,2022-01-02,Sedo\n", "price 'lots'"),
        ("domain,price_usd,date,venue\nvelmora.net,1.250,00,2022-01-02,Sedo\n", "expected 4"),
        ("domain,price_usd,date,venue\nvelmora.net,99,02/01/2022,Sedo\n", "date '02/01/2022'"),
        ("domain,price_usd,date,venue\nnot a domain,99,2022-01-02,Sedo\n", "not a valid domain"),
        ("domain,price_usd,date,venue\nvelmora.net,€99,2022-01-02,Sedo\n", "unclear (EUR, USD)"),
        ("Name,Total\nvelmora.net,99\n", "line 1: not a sales file DOMINUS reads: no price nor"),
    ],
)
def test_a_bad_export_is_one_error_naming_the_line(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(ProviderDataError) as caught:
        load_comparable_sales(write(tmp_path, text))
    assert problem in caught.value.message
