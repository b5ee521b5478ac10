"""Every constant of the scoring formulas, in one frozen value (defaults = the reference values).

Lookup tables are kept as tuples (so the config stays hashable and immutable) and turned into a
dict / frozenset once, in `__post_init__`, because the pipeline scores ~10,000 names per run."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

from dominus.scoring.prices import PriceTable, bundled_price_table

if TYPE_CHECKING:
    from dominus.scoring.renewal_prices import RegistrarPriceTable

# Multipliers for the intrinsic score by public suffix. The reference table fixes .com … .org; the
# rest ("others 0.4–0.5") is our choice: developer-flavoured gTLDs that sell reasonably 0.5,
# well-known ccTLDs used generically 0.45, cheap bulk-registered gTLDs 0.4.
DEFAULT_TLD_MULTIPLIERS: tuple[tuple[str, float], ...] = (
    ("com", 1.0),
    ("ai", 0.9),
    ("io", 0.85),
    ("co", 0.75),
    ("net", 0.65),
    ("org", 0.55),
    ("app", 0.5),
    ("dev", 0.5),
    ("me", 0.45),
    ("tv", 0.45),
    ("us", 0.45),
    ("info", 0.4),
    ("biz", 0.4),
    ("xyz", 0.4),
    ("online", 0.4),
    ("site", 0.4),
)

# Consonant pairs that are pronounced as one sound, so "strength" has clusters "str" (3) and
# "ng|th" (2 units), not "ngth" (4). "qu" is deliberately absent: u is a vowel here, so it already
# ends a consonant run, and treating "qu" as one consonant would lower the vowel ratio instead.
DEFAULT_DIGRAPHS: tuple[str, ...] = ("ch", "ck", "gh", "ng", "ph", "sh", "th", "wh")

# (max age in whole calendar years, weight); a sale exactly N years old is inside the N bracket.
DEFAULT_RECENCY_BRACKETS: tuple[tuple[int, float], ...] = ((1, 1.0), (2, 0.7), (5, 0.4))


_MUST_BE_POSITIVE = (  # divisors in the formulas
    "length_zero_span",
    "volume_cap",
    "cpc_cap",
    "min_token_length",
    "min_comparables",
    "max_comparables",
    "age_cap_years",
    "backlinks_cap",
    "wayback_cap",
    "coverage_floor",
)
_SHARES = (  # fractions of 1
    "confidence_quality_share",
    "confidence_quality_factor",
    "cross_tld_price_factor",
    "market_quantile",
    "annual_sell_through",
    "buy_max_ratio",
)


@dataclass(frozen=True)
class ScoringConfig:
    # intrinsic: length
    length_full_score_max: int = 7  # labels up to this length score 1
    length_zero_span: float = 13.0  # …then lose 1/13 per extra character (0 at 20)
    # intrinsic: hyphens and digits
    hyphen_penalty: float = 0.25
    digit_penalty: float = 0.15
    # intrinsic: pronounceability = vowelRatio·factor − max(0, (maxCluster − free)·penalty)
    vowel_ratio_factor: float = 1.8
    cluster_free_length: int = 3
    cluster_penalty: float = 0.2
    digraphs: tuple[str, ...] = DEFAULT_DIGRAPHS
    # intrinsic: mix of the three parts, then × TLD multiplier
    length_share: float = 0.30
    penalty_share: float = 0.35
    pronounceability_share: float = 0.35
    tld_multipliers: tuple[tuple[str, float], ...] = DEFAULT_TLD_MULTIPLIERS
    unknown_tld_multiplier: float = 0.45
    # commercial (log scale; see commercial.py)
    min_search_volume: int = 1000  # keyword evidence: this volume a month, or any CPC
    volume_cap: float = 1_000_000.0
    cpc_cap: float = 50.0
    volume_share: float = 0.6
    cpc_share: float = 0.4
    # market (comparables.py, market.py)
    currency: str = "USD"
    min_token_length: int = 3  # shortest word that relates two names
    comparable_tlds: tuple[str, ...] = ("com", "net", "org")
    cross_tld_price_factor: float = 0.5
    recency_brackets: tuple[tuple[int, float], ...] = DEFAULT_RECENCY_BRACKETS
    recency_older_weight: float = 0.2
    min_comparables: int = 3  # market evidence
    max_comparables: int = 20
    market_quantile: float = 0.25
    market_floor: float = 500.0
    market_ceiling: float = 10_000.0
    # expiry
    age_cap_years: float = 20.0
    backlinks_cap: float = 1000.0
    wayback_cap: float = 500.0
    age_share: float = 0.4
    backlinks_share: float = 0.4
    wayback_share: float = 0.2
    # unavailable signals
    coverage_floor: float = 0.70
    reallocate_intrinsic_share: float = 0.6  # the rest goes to expiry, when it is available
    # thresholds: base + span·ratio, ratio = min(1, coverage / coverage_floor)
    score_threshold_base: float = 0.20
    score_threshold_span: float = 0.20
    confidence_threshold_base: float = 0.18
    confidence_threshold_span: float = 0.12
    # confidence (see confidence.py): base, cap, and the share of the span the intrinsic
    # quality may add (quality_share × quality_factor at most)
    confidence_base: float = 0.2
    confidence_cap: float = 0.8
    confidence_quality_share: float = 0.12
    confidence_quality_factor: float = 0.6
    # values (value.py)
    anchor_floor: float = 500.0
    commercial_anchor_ceiling: float = 10_000.0
    expiry_anchor_ceiling: float = 3_000.0
    list_multiplier: float = 2.5
    # money gate (money.py); see ADR 0014 for where the defaults come from
    annual_sell_through: float = 0.01
    sale_commission: float = 0.20
    holding_years: int = 3
    buy_max_ratio: float = 0.02
    buy_max_absolute_cap: float = 5_000.0

    # registration and renewal prices per TLD (prices.py); the bundled table unless replaced
    prices: PriceTable = field(default_factory=bundled_price_table)
    # what registrars charge (renewal_prices.py): the owner's table over the bundled one, or
    # None for the bundled one alone (loaded when first asked for: `registrar_table`)
    registrar_prices: RegistrarPriceTable | None = None

    # derived lookup tables (not part of equality or hashing)
    _tld_table: dict[str, float] = field(init=False, repr=False, compare=False)
    _digraph_set: frozenset[str] = field(init=False, repr=False, compare=False)
    _comparable_tld_set: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._check_numbers()
        self._check_tables()
        # frozen: the derived tables are set once, here, through object.__setattr__
        object.__setattr__(self, "_tld_table", {tld.lower(): m for tld, m in self.tld_multipliers})
        object.__setattr__(self, "_digraph_set", frozenset(d.lower() for d in self.digraphs))
        tlds = frozenset(tld.lower().lstrip(".") for tld in self.comparable_tlds)
        object.__setattr__(self, "_comparable_tld_set", tlds)

    def registrar_table(self) -> RegistrarPriceTable:
        """The registrar prices in use. The bundled table is imported and read only here:
        settings are checked at every command's start, and most commands never price a
        renewal."""
        if self.registrar_prices is not None:
            return self.registrar_prices
        from dominus.scoring.renewal_prices import bundled_registrar_prices  # noqa: PLC0415

        return bundled_registrar_prices()

    def _check_numbers(self) -> None:
        for f in fields(self):
            if not f.init:
                continue
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, float | int):
                continue  # tables and the currency are checked below
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"scoring setting {f.name} must be finite and ≥ 0")
        for positive in _MUST_BE_POSITIVE:
            if getattr(self, positive) <= 0:
                raise ValueError(f"scoring setting {positive} must be > 0")
        if self.market_ceiling <= self.market_floor:
            raise ValueError("market_ceiling must be above market_floor")
        for share in ("reallocate_intrinsic_share", *_SHARES):
            if not 0 <= getattr(self, share) <= 1:
                raise ValueError(f"{share} must be within [0, 1]")
        if not 0 < self.confidence_cap <= 1 or self.confidence_base > self.confidence_cap:
            raise ValueError("confidence_cap must be within (0, 1] and not below confidence_base")
        if not 0 <= self.sale_commission < 1:
            raise ValueError("sale_commission must be within [0, 1)")
        if self.max_comparables < self.min_comparables:
            raise ValueError("max_comparables must not be below min_comparables")

    def _check_tables(self) -> None:
        # the intrinsic scan skips a digraph's second letter, so it must never be a vowel
        if any(len(d) != 2 or not d.isalpha() or d[1].lower() in "aeiouy" for d in self.digraphs):
            raise ValueError("digraphs must be two letters, the second a consonant other than y")
        table_values = [m for _, m in self.tld_multipliers] + [w for _, w in self.recency_brackets]
        if any(not math.isfinite(v) or v < 0 for v in table_values):
            raise ValueError("TLD multipliers and recency weights must be finite and ≥ 0")
        if list(self.recency_brackets) != sorted(self.recency_brackets):
            raise ValueError("recency_brackets must be sorted by age")

    def tld_multiplier(self, suffix: str) -> float:
        """The multiplier for a public suffix ("com", "co.uk"), looked up whole; unknown → default.

        A multi-label suffix is not reduced to its last label: ".co.uk" is not ".uk" (nor ".co"),
        so unless the table lists "co.uk" itself it gets `unknown_tld_multiplier`."""
        return self._tld_table.get(suffix.lower(), self.unknown_tld_multiplier)

    @property
    def digraph_set(self) -> frozenset[str]:
        return self._digraph_set

    @property
    def comparable_tld_set(self) -> frozenset[str]:
        return self._comparable_tld_set
