"""Which renewal price a portfolio entry costs (ADR 0046): the owner's own figure, else its
registrar's price for the TLD, else the highest known retail price, else the registry at-cost
price (`dominus.scoring.renewal_prices`). Everything that shows or uses an entry's renewal cost
(verdicts, the report, renewal alerts, the CLI, the entry document) asks here, so a forecast
names the price it used."""

from __future__ import annotations

from dominus.portfolio.model import PortfolioEntry
from dominus.scoring.config import ScoringConfig
from dominus.scoring.renewal_prices import RenewalPrice, RenewalPricing


def pricing_of(config: ScoringConfig) -> RenewalPricing:
    """The configured registrar prices (the bundled table, under the owner's own when
    REGISTRAR_PRICES_PATH is set) and at-cost table, in the scoring currency."""
    return RenewalPricing(config.registrar_table(), config.prices, config.currency)


def default_pricing() -> RenewalPricing:
    """Pricing with the default scoring configuration (the bundled tables, USD): for callers
    that hold no settings."""
    return pricing_of(ScoringConfig())


def entry_renewal_price(entry: PortfolioEntry, pricing: RenewalPricing) -> RenewalPrice:
    return pricing.price(entry.tld, renewal_cost=entry.renewal_cost, registrar=entry.registrar)
