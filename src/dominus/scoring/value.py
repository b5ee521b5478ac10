"""The expected value (EV): what the name would likely sell for, if it sells.

The issue gives no formula; this one is built to be conservative and explainable:

    EV = weighted score × anchor

The anchor is a price level drawn from the evidence, one per kind of evidence present:
  - market:     the comparables' weighted lower quartile (market.py), at least the floor;
  - commercial: floor + (commercial ceiling − floor) × commercial × TLD multiplier
                (500 + 9,500 × signal by default: a keyword at the caps points to $10,000 in .com);
  - expiry:     floor + (expiry ceiling − floor) × expiry × TLD multiplier
                (500 + 2,500 × signal: age and backlinks sell to a narrower, cheaper market).
The anchor is the mean of these, weighed by the signals' weights; with no evidence at all it is
the floor ($500), so an unproven name is worth at most $500 × its score. The TLD multiplier (the
intrinsic table: .com 1, .xyz 0.4) scales the proxies because keyword traffic and backlinks are
worth less under a weaker TLD; comparable sales already carry their TLD.

The weighted score (in [0, 1]) then discounts the anchor for everything the name itself lacks.
"""

from __future__ import annotations

from dataclasses import dataclass

from dominus.scoring.config import ScoringConfig
from dominus.scoring.weights import Weights


@dataclass(frozen=True)
class Anchors:
    market: float | None
    commercial: float | None
    expiry: float | None
    anchor: float

    def to_dict(self) -> dict[str, float | None]:
        return {
            "market": self.market,
            "commercial": self.commercial,
            "expiry": self.expiry,
        }


def _raised_floor(signal: float, ceiling: float, multiplier: float, config: ScoringConfig) -> float:
    return config.anchor_floor + max(0.0, ceiling - config.anchor_floor) * signal * multiplier


def anchors(
    shares: Weights,
    market_statistic: float | None,
    commercial: float | None,
    expiry: float | None,
    tld_multiplier: float,
    config: ScoringConfig,
) -> Anchors:
    """The anchors of the evidence present and their weighted mean (see the module docstring)."""
    market_anchor = (
        max(config.anchor_floor, market_statistic) if market_statistic is not None else None
    )
    commercial_anchor = (
        _raised_floor(commercial, config.commercial_anchor_ceiling, tld_multiplier, config)
        if commercial is not None
        else None
    )
    expiry_anchor = (
        _raised_floor(expiry, config.expiry_anchor_ceiling, tld_multiplier, config)
        if expiry is not None
        else None
    )
    present = [
        (shares.market, market_anchor),
        (shares.commercial, commercial_anchor),
        (shares.expiry, expiry_anchor),
    ]
    weight = sum(share for share, value in present if value is not None)
    anchor = config.anchor_floor
    if weight > 0:
        anchor = sum(share * value for share, value in present if value is not None) / weight
    return Anchors(market_anchor, commercial_anchor, expiry_anchor, anchor)
