"""The money gate and the buy maximum.

    r               = annual sell-through × confidence / confidence cap    (0.01 × c / 0.8)
    P(sale)         = 1 − (1 − r)^years                                     (years = 3)
    expected revenue = EV × (1 − commission) × P(sale)                      (commission 0.20)
    expected profit  = expected revenue − holding cost                      (must be > 0)
    buy max          = max(0, min(EV × buy-max ratio − carrying cost, absolute cap))

With the value model's values (valuation/), EV is the retail P50 (what an end user would pay),
and a purchase from a listing is also held against the wholesale P50 (what investors pay each
other): the buy max never goes above the wholesale P50 unless the retail case pays for more (up
to its break-even price, expected revenue − carrying cost), and a listed price above the
wholesale P50 is said in the gate's reason.

Holding cost, the conservative reading of the issue's "registration + renewals over those years":
  - a hand registration pays its registration fee, which covers year 1, then a renewal for each
    further year: registration + renewal × (years − 1);
  - a purchase (closeout or auction listing) pays the listed price, and its remaining term is
    unknown, so every year of the hold is a renewal: price + renewal × years.
Carrying cost is the holding cost without a seller's price (registration + renewal × (years − 1)
for a hand registration, renewal × years for a purchase): the buy max is the most to pay a seller,
so the price it is compared with is not also subtracted from it.

Prices come from the TLD price table (prices.py); a renewal cost given with the candidate replaces
the table's renewal. The gate cannot pass, and says why, when a price is missing: a TLD the table
does not list ("no price for .dev in …"), or a purchase without a listed price ("no listed price:
shown with its buy max only"). Without a renewal price the carrying cost is unknown and the buy
max is 0: no safe maximum can be worked out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dominus.domain_names import split_domain
from dominus.scoring.config import ScoringConfig
from dominus.scoring.prices import TldPrice

NO_LISTED_PRICE = "no listed price: shown with its buy max only"


@dataclass(frozen=True)
class Acquisition:
    """How a candidate would be acquired."""

    domain: str
    purchase: bool = False  # bought from a listing (closeout/auction), not hand-registered
    listed_price: float | None = None  # the listing's price, for a purchase
    renewal_cost: float | None = None  # per year; replaces the price table's renewal when given


@dataclass(frozen=True)
class Money:
    purchase: bool
    acquisition_cost: float | None  # registration fee or listed price; None: unknown
    renewal_per_year: float | None
    holding_years: int
    holding_cost: float | None  # acquisition + renewals over the holding years
    carrying_cost: float | None  # the holding cost without a seller's price
    sale_commission: float
    annual_sell_through: float
    sell_through_rate: float  # r
    p_sale: float  # P(sale within the holding years)
    expected_revenue: float
    expected_profit: float | None  # None when a price is missing
    buy_max: float
    price_source: str  # where the registration/renewal prices came from
    problem: str | None  # why the gate cannot be evaluated (a missing price)
    # What investors pay each other for the name (the value model's wholesale P50), if known.
    wholesale_p50: float | None = None

    @property
    def passes(self) -> bool:
        return (
            self.problem is None and self.expected_profit is not None and (self.expected_profit > 0)
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "purchase": self.purchase,
            "acquisition_cost": self.acquisition_cost,
            "renewal_per_year": self.renewal_per_year,
            "holding_years": self.holding_years,
            "holding_cost": self.holding_cost,
            "carrying_cost": self.carrying_cost,
            "sale_commission": self.sale_commission,
            "annual_sell_through": self.annual_sell_through,
            "sell_through_rate": self.sell_through_rate,
            "p_sale": self.p_sale,
            "expected_revenue": self.expected_revenue,
            "expected_profit": self.expected_profit,
            "buy_max": self.buy_max,
            "price_source": self.price_source,
            "problem": self.problem,
            "passes": self.passes,
            "wholesale_p50": self.wholesale_p50,
            "above_wholesale": self.above_wholesale,
        }

    @property
    def above_wholesale(self) -> bool:
        """A purchase listed above what investors pay each other for the name."""
        return (
            self.purchase
            and self.wholesale_p50 is not None
            and self.acquisition_cost is not None
            and self.acquisition_cost > self.wholesale_p50
        )


def sell_through_rate(confidence: float, config: ScoringConfig) -> float:
    return config.annual_sell_through * confidence / config.confidence_cap


def p_sale(rate: float, years: int) -> float:
    return 1.0 - (1.0 - rate) ** years


def _cents(value: float) -> float:
    return round(value, 2)


def _table_price(domain: str, config: ScoringConfig) -> tuple[TldPrice | None, str]:
    """The TLD's prices, and what to say when there are none."""
    _, suffix = split_domain(domain)
    table = config.prices
    if table.currency != config.currency:
        return None, f"no {config.currency} prices: {table.source} is in {table.currency}"
    return table.lookup(suffix), f"no price for .{suffix} in {table.source}"


def money(
    acquisition: Acquisition,
    expected_value: float,
    confidence: float,
    config: ScoringConfig,
    wholesale_p50: float | None = None,
) -> Money:
    """The money gate's figures for one candidate; pure. `wholesale_p50`: the value model's
    wholesale P50, when the name was valued (see the module docstring)."""
    price, missing_price = _table_price(acquisition.domain, config)
    renewal = acquisition.renewal_cost
    if renewal is None and price is not None:
        renewal = price.renewal
    years = config.holding_years
    cost: float | None
    carrying: float | None = None
    if acquisition.purchase:
        cost = acquisition.listed_price
        if renewal is not None:
            carrying = renewal * years
        holding = cost + carrying if cost is not None and carrying is not None else None
    else:
        cost = price.registration if price is not None else None
        if cost is not None and renewal is not None:
            carrying = cost + renewal * (years - 1)
        holding = carrying
    problems = []
    if acquisition.purchase and cost is None:
        problems.append(NO_LISTED_PRICE)
    if carrying is None:
        problems.append(missing_price)
    rate = sell_through_rate(confidence, config)
    chance = p_sale(rate, years)
    revenue = expected_value * (1.0 - config.sale_commission) * chance
    buy_max = 0.0
    if carrying is not None:
        ceiling = expected_value * config.buy_max_ratio - carrying
        if wholesale_p50 is not None:
            ceiling = min(ceiling, max(wholesale_p50, revenue - carrying))
        buy_max = max(0.0, min(ceiling, config.buy_max_absolute_cap))
    return Money(
        purchase=acquisition.purchase,
        acquisition_cost=cost,
        renewal_per_year=renewal,
        holding_years=years,
        holding_cost=_cents(holding) if holding is not None else None,
        carrying_cost=_cents(carrying) if carrying is not None else None,
        sale_commission=config.sale_commission,
        annual_sell_through=config.annual_sell_through,
        sell_through_rate=rate,
        p_sale=chance,
        expected_revenue=_cents(revenue),
        expected_profit=_cents(revenue - holding) if holding is not None else None,
        buy_max=_cents(buy_max),
        price_source=config.prices.source,
        problem="; ".join(problems) or None,
        wholesale_p50=_cents(wholesale_p50) if wholesale_p50 is not None else None,
    )
