"""Every scoring constant as an environment variable: `SCORING_<FIELD>` for each field of
`ScoringConfig` (SCORING_MIN_COMPARABLES, SCORING_SALE_COMMISSION, ...), plus `TLD_PRICES_PATH`.

`SETTINGS` below is the one list: each entry names a ScoringConfig field, its allowed range and a
line of help; the default is the field's own default. From it come the pydantic fields of the
process settings (`ScoringSettings`, a base class of `dominus.config.Settings`, so a value out of
range stops start-up with the variable's name and range), `scoring_config()` (settings →
ScoringConfig, loading the price table) and `dominus scoring config`.

Tables are written as text: SCORING_TLD_MULTIPLIERS="com:1,io:0.85", SCORING_RECENCY_BRACKETS=
"1:1,2:0.7,5:0.4" (max age in years: weight), SCORING_DIGRAPHS="ch,sh,th",
SCORING_COMPARABLE_TLDS="com,net,org".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field, create_model
from pydantic_settings import BaseSettings

from dominus.errors import ConfigurationError
from dominus.scoring.config import ScoringConfig
from dominus.scoring.prices import (
    BUNDLED_PRICES_PATH,
    PriceTable,
    bundled_price_table,
    load_price_table,
)
from dominus.settings_slice import SettingsSlice

if TYPE_CHECKING:
    from dominus.scoring.renewal_prices import RegistrarPriceTable

PREFIX = "SCORING_"
MAX_MONEY = 1_000_000_000.0


@dataclass(frozen=True)
class Setting:
    field: str  # the ScoringConfig field
    low: float | None  # allowed range, inclusive (None: text)
    high: float | None
    help: str

    @property
    def env(self) -> str:
        return PREFIX + self.field.upper()


def _unit(name: str, help_text: str) -> Setting:
    return Setting(name, 0, 1, help_text)


SETTINGS: tuple[Setting, ...] = (
    # intrinsic
    Setting("length_full_score_max", 1, 63, "labels up to this length score 1 for length"),
    Setting("length_zero_span", 1, 63, "characters over that for the length score to reach 0"),
    _unit("hyphen_penalty", "character score lost per hyphen"),
    _unit("digit_penalty", "character score lost per digit"),
    Setting("vowel_ratio_factor", 0, 10, "pronounceability = vowel ratio × this − clusters"),
    Setting("cluster_free_length", 0, 63, "consonant run that costs nothing"),
    _unit("cluster_penalty", "pronounceability lost per consonant over that"),
    Setting("digraphs", None, None, "consonant pairs counted as one sound"),
    _unit("length_share", "intrinsic: share of the length score"),
    _unit("penalty_share", "intrinsic: share of the hyphen/digit score"),
    _unit("pronounceability_share", "intrinsic: share of pronounceability"),
    Setting("tld_multipliers", None, None, "intrinsic × this per TLD (tld:multiplier)"),
    _unit("unknown_tld_multiplier", "multiplier of a TLD not listed"),
    # commercial
    Setting("min_search_volume", 0, MAX_MONEY, "keyword evidence: searches a month (or a CPC)"),
    Setting("volume_cap", 1, 1e12, "search volume where the volume part reaches 1"),
    Setting("cpc_cap", 0.01, 1e6, "CPC where the CPC part reaches 1"),
    _unit("volume_share", "commercial: share of the volume part"),
    _unit("cpc_share", "commercial: share of the CPC part"),
    # market
    Setting("currency", None, None, "currency of every price; others are never converted"),
    Setting("min_token_length", 1, 63, "shortest word that relates two names"),
    Setting("comparable_tlds", None, None, "TLDs whose sales count for each other"),
    _unit("cross_tld_price_factor", "price factor of a sale from a comparable TLD"),
    Setting("recency_brackets", None, None, "sale weight by age (max years:weight)"),
    _unit("recency_older_weight", "weight of a sale older than every bracket"),
    Setting("min_comparables", 1, 1000, "relevant sales needed for market evidence"),
    Setting("max_comparables", 1, 1000, "heaviest relevant sales used and listed"),
    _unit("market_quantile", "quantile of the sale prices used (0.25 = lower quartile)"),
    Setting("market_floor", 0, MAX_MONEY, "price where the market signal is 0"),
    Setting("market_ceiling", 1, MAX_MONEY, "price where the market signal is 1"),
    # expiry
    Setting("age_cap_years", 0.1, 200, "age where the age part reaches 1"),
    Setting("backlinks_cap", 1, MAX_MONEY, "backlinks where that part reaches 1"),
    Setting("wayback_cap", 1, MAX_MONEY, "archive snapshots where that part reaches 1"),
    _unit("age_share", "expiry: share of age"),
    _unit("backlinks_share", "expiry: share of backlinks"),
    _unit("wayback_share", "expiry: share of archive snapshots"),
    # weighting and thresholds
    Setting("coverage_floor", 0.01, 1, "below this available weight, missing weight moves"),
    _unit("reallocate_intrinsic_share", "share of it moved to intrinsic (rest to expiry)"),
    _unit("score_threshold_base", "score threshold = base + span × coverage ratio"),
    _unit("score_threshold_span", "see SCORING_SCORE_THRESHOLD_BASE"),
    _unit("confidence_threshold_base", "confidence threshold = base + span × coverage ratio"),
    _unit("confidence_threshold_span", "see SCORING_CONFIDENCE_THRESHOLD_BASE"),
    # confidence
    _unit("confidence_base", "confidence with only the intrinsic signal"),
    Setting("confidence_cap", 0.01, 1, "highest confidence"),
    _unit("confidence_quality_share", "share of the span kept for intrinsic quality"),
    _unit("confidence_quality_factor", "intrinsic × share × this is the quality boost"),
    # values
    Setting("anchor_floor", 0, MAX_MONEY, "anchor with no evidence; EV ≤ this × score"),
    Setting("commercial_anchor_ceiling", 0, MAX_MONEY, "anchor of a keyword at the caps"),
    Setting("expiry_anchor_ceiling", 0, MAX_MONEY, "anchor of expiry facts at the caps"),
    Setting("list_multiplier", 0, 100, "suggested list price = EV × this (within retail P50–P90)"),
    # money
    _unit("annual_sell_through", "share of a portfolio sold a year, at full confidence"),
    Setting("sale_commission", 0, 0.99, "marketplace commission on a sale"),
    Setting("holding_years", 1, 30, "years a name is held (and paid for) before judging it"),
    _unit("buy_max_ratio", "buy max = EV × this − holding cost"),
    Setting("buy_max_absolute_cap", 0, MAX_MONEY, "buy max never above this"),
)

_BY_FIELD = {setting.field: setting for setting in SETTINGS}
_DEFAULTS = {f.name: f.default for f in fields(ScoringConfig) if f.default is not MISSING}


def _pydantic_field(setting: Setting) -> tuple[Any, Any]:
    default = _DEFAULTS[setting.field]
    if setting.low is None:
        return (str, Field(default=_as_text(default), min_length=1))
    kind = int if isinstance(default, int) else float
    return (kind, Field(default=default, ge=setting.low, le=setting.high))


def _as_text(value: Any) -> str:
    """A table's value as its environment-variable text: "com:1,io:0.85", "ch,sh"."""
    if isinstance(value, str):
        return value
    return ",".join(
        f"{item[0]}:{item[1]:g}" if isinstance(item, tuple) else str(item) for item in value
    )


class _PriceSettings(SettingsSlice):
    # A CSV `tld,registration,renewal,currency`; unset: the bundled table (prices.py).
    TLD_PRICES_PATH: str | None = None
    # The owner's registrar prices, the bundled table's format; its rows replace the bundled
    # ones for the same registrar and TLD (renewal_prices.py).
    REGISTRAR_PRICES_PATH: str | None = None


# The SCORING_* fields are generated from SETTINGS; type checkers see them as plain attributes
# read with getattr (scoring_config), so they are declared only at run time.
if TYPE_CHECKING:
    ScoringSettings = _PriceSettings
else:
    ScoringSettings = create_model(
        "ScoringSettings",
        __base__=_PriceSettings,
        **{setting.env: _pydantic_field(setting) for setting in SETTINGS},
    )


def _words(name: str, text: str) -> tuple[str, ...]:
    items = tuple(part.strip().lower() for part in text.split(",") if part.strip())
    if not items:
        raise ConfigurationError(f"invalid settings: {name}={text!r}: give at least one entry")
    return items


def _pairs(name: str, text: str, key: Callable[[str], Any]) -> tuple[tuple[Any, float], ...]:
    pairs = []
    for item in _words(name, text):
        left, colon, right = item.partition(":")
        try:
            if not colon:
                raise ValueError(item)
            pairs.append((key(left.strip()), float(right)))
        except ValueError:
            example = _as_text(_DEFAULTS[name.removeprefix(PREFIX).lower()][:2])
            raise ConfigurationError(
                f"invalid settings: {name}={text!r}: {item!r} is not key:number (e.g. {example})"
            ) from None
    return tuple(pairs)


def _currency(name: str, text: str) -> str:
    code = text.strip().upper()
    if not re.fullmatch(r"[A-Z]{3}", code):
        raise ConfigurationError(f"invalid settings: {name}={text!r}: a 3-letter currency code")
    return code


_TABLES: dict[str, Callable[[str, str], Any]] = {
    "digraphs": _words,
    "comparable_tlds": lambda name, text: tuple(w.lstrip(".") for w in _words(name, text)),
    "tld_multipliers": lambda name, text: _pairs(name, text, lambda key: key.lstrip(".")),
    "recency_brackets": lambda name, text: _pairs(name, text, int),
    "currency": _currency,
}


def price_table(settings: BaseSettings) -> PriceTable:
    path = getattr(settings, "TLD_PRICES_PATH", None)  # any BaseSettings; ours have it
    if path:
        return load_price_table(Path(path), label=f"TLD_PRICES_PATH {path}")
    return bundled_price_table()


def registrar_price_table(settings: BaseSettings) -> RegistrarPriceTable | None:
    """REGISTRAR_PRICES_PATH's table over the bundled one; None when it is unset (the bundled
    table alone, read only when a renewal is priced: `ScoringConfig.registrar_table`)."""
    path = getattr(settings, "REGISTRAR_PRICES_PATH", None)  # any BaseSettings; ours have it
    if not path:
        return None
    from dominus.scoring.renewal_prices import owner_registrar_prices  # noqa: PLC0415

    return owner_registrar_prices(Path(path))


def scoring_config(settings: BaseSettings) -> ScoringConfig:
    """The ScoringConfig of these settings, the price table loaded; ConfigurationError (one line,
    naming the variable or the file and line) for anything wrong."""
    values: dict[str, Any] = {}
    for setting in SETTINGS:
        raw = getattr(settings, setting.env)
        convert = _TABLES.get(setting.field)
        values[setting.field] = convert(setting.env, raw) if convert else raw
    prices = price_table(settings)
    if prices.currency != values["currency"]:
        raise ConfigurationError(
            f"the TLD price table {prices.source} is in {prices.currency} but "
            f"SCORING_CURRENCY is {values['currency']}: prices are never converted"
        )
    registrar_prices = registrar_price_table(settings)
    if registrar_prices is not None and registrar_prices.currency != values["currency"]:
        raise ConfigurationError(
            f"the registrar price table {registrar_prices.source} is in "
            f"{registrar_prices.currency} but SCORING_CURRENCY is {values['currency']}: "
            "prices are never converted"
        )
    try:
        return ScoringConfig(**values, prices=prices, registrar_prices=registrar_prices)
    except ValueError as error:
        raise ConfigurationError(f"invalid settings: {_env_names(str(error))}") from None


def _env_names(message: str) -> str:
    """A ScoringConfig message with its field names written as the variables that set them."""
    return re.sub(
        r"\b[a-z][a-z_]+\b",
        lambda found: _BY_FIELD[found[0]].env if found[0] in _BY_FIELD else found[0],
        message,
    )


def describe(settings: BaseSettings, config: ScoringConfig) -> list[dict[str, Any]]:
    """Every scoring variable: its effective value, default, allowed range and help."""
    rows = []
    for setting in SETTINGS:
        value = getattr(config, setting.field)
        rows.append(
            {
                "variable": setting.env,
                "value": _as_text(value) if setting.low is None else value,
                "default": _as_text(_DEFAULTS[setting.field])
                if setting.low is None
                else _DEFAULTS[setting.field],
                "range": None if setting.low is None else [setting.low, setting.high],
                "help": setting.help,
            }
        )
    rows.append(
        {
            "variable": "TLD_PRICES_PATH",
            "value": getattr(settings, "TLD_PRICES_PATH", None),
            "default": None,
            "range": None,
            "help": f"price table CSV; unset: the bundled {BUNDLED_PRICES_PATH.name}",
        }
    )
    rows.append(
        {
            "variable": "REGISTRAR_PRICES_PATH",
            "value": getattr(settings, "REGISTRAR_PRICES_PATH", None),
            "default": None,
            "range": None,
            "help": "your registrar prices CSV, its rows over the bundled "
            "registrar_prices.csv; unset: the bundled table alone",
        }
    )
    return rows
