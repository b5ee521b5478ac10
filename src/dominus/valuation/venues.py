"""Which class of market a sale's venue belongs to: wholesale or retail.

*Wholesale* is what investors pay each other: expired-name auctions and investor marketplaces.
*Retail* is what an end user pays: brokered and listed sales to the business that will use the
name. The two differ by a factor of several for the same kind of name, so the value model prices
each class apart and a sale is judged against the value of its own class.

This module is the one place that maps a venue to its class (docs/valuation.md lists it). A venue
is compared by its key: lower case, without a trailing ".com"/".net"/".io" and without spaces,
dots or dashes ("Sav.com" → "sav", "Park.io" → "park", "DAN.com" → "dan").

A venue that is not listed counts as wholesale. That is the conservative reading: wholesale
values are the lower ones, so an unknown venue's sales pull the values a buyer would pay down,
never up, and a buy decision made on them errs on the cheap side.
"""

from __future__ import annotations

import re
from enum import StrEnum


class VenueClass(StrEnum):
    WHOLESALE = "wholesale"
    RETAIL = "retail"


WHOLESALE_VENUES: frozenset[str] = frozenset(
    {
        "godaddy",  # GoDaddy Auctions: expired names and investors' listings
        "dropcatch",
        "namejet",
        "snapnames",
        "dynadot",
        "namecheap",
        "catched",
        "park",  # Park.io
        "sav",
        "daaz",  # DaaZ.com: an investor-to-investor marketplace
        "domainlore",  # DomainLore.uk: UK expired-name auctions
        "123reg",  # a registrar's expired-name auctions
        "namepros",  # the investors' forum marketplace
        "flippa",
        "gname",
        "porkbun",
        "expireddomains",
    }
)

RETAIL_VENUES: frozenset[str] = frozenset(
    {
        "sedo",
        "afternic",
        "atom",  # Atom.com, formerly Squadhelp: brandables sold to end users
        "squadhelp",
        "dan",  # DAN.com
        "buydomains",
        "hugedomains",
        "private",  # a private sale, usually to the end user
        "domainmarket",
        "brandnames",
        "brandbucket",
        "domainhacks",
        "domainretail",
        "webrokervc",  # a broker
        "efty",
        "uniregistry",
        "epik",
        "escrow",  # a sale reported through Escrow.com, typically to an end user
        "broker",  # brokered sales (MediaOptions, Grit, DNW and others): to end users
        "mediaoptions",
        "gritbrokerage",
        "registry",  # a registry's premium sale to the end user
        "topdomains",  # TOP.DOMAINS: a registry's premium names
    }
)

_SUFFIXES = re.compile(r"\.(com|net|io|vc|uk|co)$")
_NOISE = re.compile(r"[^a-z0-9]")


def venue_key(venue: str) -> str:
    """The venue as compared: "Sav.com" → "sav", "DAN.com" → "dan", "123 Reg" → "123reg"."""
    name = venue.strip().lower()
    name = _SUFFIXES.sub("", name)
    return _NOISE.sub("", name)


def venue_class(venue: str) -> VenueClass:
    """The class of `venue` (see the module docstring; an unknown venue is wholesale)."""
    key = venue_key(venue)
    if key in RETAIL_VENUES:
        return VenueClass.RETAIL
    return VenueClass.WHOLESALE


def is_known_venue(venue: str) -> bool:
    key = venue_key(venue)
    return key in RETAIL_VENUES or key in WHOLESALE_VENUES
