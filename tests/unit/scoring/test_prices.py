"""The TLD price table: the bundled, dated file, and one clear error per bad file (naming the file
and line), never a traceback or a silently odd price."""

from __future__ import annotations

from pathlib import Path

import pytest

from dominus.errors import ConfigurationError
from dominus.scoring import ScoringConfig
from dominus.scoring.prices import (
    BUNDLED_PRICES_PATH,
    bundled_price_table,
    iana_tlds,
    load_price_table,
)

HEADER = "tld,registration,renewal,currency\n"


def test_the_bundled_table_has_the_published_at_cost_figures() -> None:
    table = bundled_price_table()
    renewals = {price.tld: price.renewal for price in table.prices}
    assert renewals == {
        "com": 10.46,
        "net": 11.86,
        "org": 11.20,
        "xyz": 11.20,
        "info": 21.20,
        "co": 30.0,
        "io": 50.0,
        "ai": 80.0,
    }
    assert all(price.registration == price.renewal for price in table.prices)
    assert table.currency == "USD"
    assert "tld_prices.csv" in table.source
    assert ScoringConfig().prices == table


def test_the_bundled_table_says_where_and_when_its_figures_come_from() -> None:
    header = [line for line in BUNDLED_PRICES_PATH.read_text().splitlines() if line.startswith("#")]
    text = " ".join(header)
    assert "registrar-exports.md" in text
    assert "2026-11-30" in text


def test_lookup_is_by_the_whole_suffix(tmp_path: Path) -> None:
    path = tmp_path / "prices.csv"
    path.write_text(HEADER + ".COM,9,12.5,usd\nco.uk,4,6,USD\n")
    table = load_price_table(path)
    com = table.lookup("com")
    assert com is not None and (com.registration, com.renewal, com.currency) == (9, 12.5, "USD")
    assert table.lookup(".Co.Uk") is not None
    assert table.lookup("uk") is None
    assert table.lookup("dev") is None
    assert table.source == str(path)


def test_the_iana_list_is_bundled_with_its_version() -> None:
    known = iana_tlds()
    assert known.version.startswith("Version ")
    assert {"com", "io", "xn--p1ai"} <= known.tlds
    assert "cmo" not in known.tlds


@pytest.mark.parametrize(
    ("content", "line", "problem"),
    [
        (HEADER + "com,10,-3,USD\n", 2, "renewal '-3' must be a finite, non-negative number"),
        (HEADER + "com,abc,10,USD\n", 2, "registration 'abc' is not a number"),
        (HEADER + "com,10,nan,USD\n", 2, "renewal 'nan' must be a finite"),
        (HEADER + "com,10,10,USD\ncmo,10,10,USD\n", 3, "not a top-level domain in IANA's list"),
        (HEADER + "c m,10,10,USD\n", 2, "is not a domain suffix"),
        (HEADER + "com,10,10,USD\nCOM,11,11,USD\n", 3, "listed twice (first on line 2)"),
        (HEADER + "com,10,10,USD\nnet,11,11,EUR\n", 3, "currency EUR differs from USD"),
        (HEADER + 'com,"10,10,USD\n', 2, "a quote is not closed"),
        (HEADER + "com,10,10\n", 2, "expected 4 fields, found 3"),
        ("tld,price,currency\ncom,10,USD\n", 1, "missing registration, renewal"),
        (HEADER + ",10,10,USD\n", 2, "tld is empty"),
    ],
)
def test_a_bad_file_is_one_line_naming_file_and_line(
    tmp_path: Path, content: str, line: int, problem: str
) -> None:
    path = tmp_path / "prices.csv"
    path.write_text(content)
    with pytest.raises(ConfigurationError) as caught:
        load_price_table(path)
    message = str(caught.value)
    assert f"{path}, line {line}: " in message
    assert problem in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("content", "problem"),
    [(None, "file not found"), ("# only a comment\n", "no header line"), (HEADER, "no prices")],
)
def test_a_missing_or_empty_file_is_named(
    tmp_path: Path, content: str | None, problem: str
) -> None:
    path = tmp_path / "prices.csv"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ConfigurationError, match=problem) as caught:
        load_price_table(path)
    assert str(path) in str(caught.value)
