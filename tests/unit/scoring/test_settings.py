"""SCORING_* settings: every constant of ScoringConfig is an environment variable, validated at
start-up with its name and allowed range (one ConfigurationError line, exit 2 from the CLI)."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from dominus.config import Settings, load_settings
from dominus.errors import ConfigurationError
from dominus.scoring import ScoringConfig
from dominus.scoring.settings import SETTINGS, describe, scoring_config
from tests.support.reference_pages import settings_reference_page


def settings(**values: Any) -> Settings:
    return load_settings(_env_file=None, **values)


def test_the_defaults_are_the_engine_defaults() -> None:
    assert scoring_config(settings()) == ScoringConfig()


def test_every_config_constant_is_a_setting() -> None:
    tables = {"prices", "registrar_prices"}  # files, set by the *_PATH settings
    constants = {f.name for f in fields(ScoringConfig) if f.init and f.name not in tables}
    assert {setting.field for setting in SETTINGS} == constants


@pytest.mark.parametrize(
    ("values", "field", "expected"),
    [
        ({"SCORING_MIN_COMPARABLES": 5}, "min_comparables", 5),
        ({"SCORING_SALE_COMMISSION": "0.3"}, "sale_commission", 0.3),
        ({"SCORING_HOLDING_YEARS": "5"}, "holding_years", 5),
        ({"SCORING_CURRENCY": "usd"}, "currency", "USD"),
        ({"SCORING_COMPARABLE_TLDS": ".com, net"}, "comparable_tlds", ("com", "net")),
        ({"SCORING_DIGRAPHS": "ch,th"}, "digraphs", ("ch", "th")),
        (
            {"SCORING_TLD_MULTIPLIERS": "com:1, .io:0.8"},
            "tld_multipliers",
            (("com", 1.0), ("io", 0.8)),
        ),
        ({"SCORING_RECENCY_BRACKETS": "1:1,3:0.5"}, "recency_brackets", ((1, 1.0), (3, 0.5))),
    ],
)
def test_a_variable_sets_its_constant(values: dict[str, Any], field: str, expected: Any) -> None:
    assert getattr(scoring_config(settings(**values)), field) == expected


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCORING_ANNUAL_SELL_THROUGH", "0.02")
    monkeypatch.setenv("SCORING_BUY_MAX_ABSOLUTE_CAP", "2500")
    config = scoring_config(load_settings(_env_file=None))
    assert (config.annual_sell_through, config.buy_max_absolute_cap) == (0.02, 2500.0)


@pytest.mark.parametrize(
    ("values", "fragments"),
    [
        ({"SCORING_SALE_COMMISSION": "-0.1"}, ["SCORING_SALE_COMMISSION", "0..0.99"]),
        ({"SCORING_ANNUAL_SELL_THROUGH": "-1"}, ["SCORING_ANNUAL_SELL_THROUGH", "0..1"]),
        ({"SCORING_MIN_COMPARABLES": "0"}, ["SCORING_MIN_COMPARABLES", "1..1000"]),
        ({"SCORING_HOLDING_YEARS": "2.5"}, ["SCORING_HOLDING_YEARS"]),
        ({"SCORING_MARKET_FLOOR": "abc"}, ["SCORING_MARKET_FLOOR"]),
        (
            {"SCORING_MARKET_CEILING": "100"},
            ["SCORING_MARKET_CEILING must be above SCORING_MARKET_FLOOR"],
        ),
        (
            {"SCORING_MIN_COMPARABLES": "30"},
            ["SCORING_MAX_COMPARABLES must not be below SCORING_MIN_COMPARABLES"],
        ),
        ({"SCORING_TLD_MULTIPLIERS": "com"}, ["SCORING_TLD_MULTIPLIERS='com'", "key:number"]),
        ({"SCORING_RECENCY_BRACKETS": "x:1"}, ["SCORING_RECENCY_BRACKETS"]),
        ({"SCORING_DIGRAPHS": "ch,ea"}, ["SCORING_DIGRAPHS must be two letters"]),
        ({"SCORING_COMPARABLE_TLDS": " , "}, ["SCORING_COMPARABLE_TLDS", "at least one"]),
        ({"SCORING_CURRENCY": "dollars"}, ["SCORING_CURRENCY", "3-letter"]),
        ({"SCORING_CURRENCY": "EUR"}, ["is in USD but SCORING_CURRENCY is EUR"]),
    ],
)
def test_a_bad_value_is_one_line_naming_the_variable(
    values: dict[str, Any], fragments: list[str]
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        settings(**values)
    message = str(caught.value)
    for fragment in fragments:
        assert fragment in message
    assert "\n" not in message


def test_the_price_table_path(tmp_path: Path) -> None:
    path = tmp_path / "prices.csv"
    path.write_text("tld,registration,renewal,currency\ncom,9,12,USD\ndev,15,15,USD\n")
    config = scoring_config(settings(TLD_PRICES_PATH=str(path)))
    assert config.prices.source == f"TLD_PRICES_PATH {path}"
    assert config.prices.lookup("dev") is not None
    assert config.prices.lookup("net") is None  # the file replaces the bundled table whole
    path.write_text("tld,registration,renewal,currency\ncom,9,-12,USD\n")
    with pytest.raises(ConfigurationError, match=rf"{re.escape(str(path))}, line 2: renewal"):
        settings(TLD_PRICES_PATH=str(path))


REGISTRAR_HEADER = (
    "registrar,tld,registration,renewal,transfer,currency,observed_on,date_basis,source,note\n"
)


def test_the_registrar_price_table_path(tmp_path: Path) -> None:
    path = tmp_path / "mine.csv"
    path.write_text(REGISTRAR_HEADER + "GoDaddy,com,,23.99,,USD,2026-11-20,published,invoice,\n")
    config = scoring_config(settings(REGISTRAR_PRICES_PATH=str(path)))
    assert config.registrar_table().source.startswith(f"REGISTRAR_PRICES_PATH {path} over ")
    godaddy = config.registrar_table().lookup("GoDaddy", "com")
    assert godaddy is not None and godaddy.renewal == 23.99
    assert scoring_config(settings()).registrar_table().lookup("GoDaddy", "com") is None
    # a table in another currency than the scoring one: refused at start-up, never converted
    path.write_text(REGISTRAR_HEADER + "GoDaddy,de,,14.99,,EUR,2026-11-20,published,invoice,\n")
    with pytest.raises(ConfigurationError, match="is in EUR but SCORING_CURRENCY is USD"):
        settings(REGISTRAR_PRICES_PATH=str(path))
    path.write_text(REGISTRAR_HEADER + "GoDaddy,com,,-1,,USD,2026-11-20,published,invoice,\n")
    with pytest.raises(ConfigurationError, match=rf"{re.escape(str(path))}, line 2: renewal"):
        settings(REGISTRAR_PRICES_PATH=str(path))
    with pytest.raises(ConfigurationError, match="REGISTRAR_PRICES_PATH"):
        settings(REGISTRAR_PRICES_PATH=str(tmp_path / "missing.csv"))


def test_a_retired_setting_is_refused_not_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEFAULT_RENEWAL_COST", "12")
    with pytest.raises(ConfigurationError, match="DEFAULT_RENEWAL_COST is no longer read"):
        load_settings(_env_file=None)


def test_describe_lists_every_variable_with_its_value_and_range() -> None:
    current = settings(SCORING_HOLDING_YEARS=5)
    rows = describe(current, scoring_config(current))
    by_name = {row["variable"]: row for row in rows}
    assert len(by_name) == len(SETTINGS) + 2  # + TLD_PRICES_PATH, REGISTRAR_PRICES_PATH
    assert by_name["SCORING_HOLDING_YEARS"] == {
        "variable": "SCORING_HOLDING_YEARS",
        "value": 5,
        "default": 3,
        "range": [1, 30],
        "help": by_name["SCORING_HOLDING_YEARS"]["help"],
    }
    assert by_name["SCORING_COMPARABLE_TLDS"]["value"] == "com,net,org"


def test_every_variable_is_documented_in_the_settings_reference() -> None:
    text = settings_reference_page()
    missing = [s.env for s in SETTINGS if f"`{s.env}`" not in text]
    assert missing == []
    assert "`TLD_PRICES_PATH`" in text
    assert "`REGISTRAR_PRICES_PATH`" in text
    assert "| `SCORING_HOLDING_YEARS` | `3` | 1–30 | years a name is held" in text
