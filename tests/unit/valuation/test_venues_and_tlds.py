from __future__ import annotations

import pytest

from dominus.valuation.tlds import TldGroup, split_domain, tld_group
from dominus.valuation.venues import VenueClass, is_known_venue, venue_class, venue_key


@pytest.mark.parametrize(
    "venue",
    [
        "GoDaddy",
        "DropCatch",
        "NameJet",
        "Dynadot",
        "Namecheap",
        "Catched.com",
        "Park.io",
        "Sav.com",
    ],
)
def test_investor_venues_are_wholesale(venue: str) -> None:
    assert venue_class(venue) is VenueClass.WHOLESALE
    assert is_known_venue(venue)


@pytest.mark.parametrize(
    "venue", ["Sedo", "Afternic", "Atom.com", "DAN.com", "BuyDomains", "Private", " private "]
)
def test_end_user_venues_are_retail(venue: str) -> None:
    assert venue_class(venue) is VenueClass.RETAIL


def test_an_unknown_venue_is_wholesale_the_conservative_class() -> None:
    assert not is_known_venue("Some New Auction House")
    assert venue_class("Some New Auction House") is VenueClass.WHOLESALE


def test_venue_keys_ignore_case_suffix_and_punctuation() -> None:
    assert venue_key("Sav.com") == "sav"
    assert venue_key("DAN.com") == "dan"
    assert venue_key("123 Reg") == "123reg"
    assert venue_key("Park.io") == "park"


def test_split_domain_and_groups() -> None:
    assert split_domain("Voice.COM.") == ("voice", "com")
    assert split_domain("shop.co.uk") == ("shop", "co.uk")
    assert tld_group("com") is TldGroup.COM
    assert tld_group("org") is TldGroup.NET_ORG
    assert tld_group("info") is TldGroup.LEGACY
    assert tld_group("io") is TldGroup.TECH
    assert tld_group("de") is TldGroup.CCTLD
    assert tld_group("co.uk") is TldGroup.CCTLD
    assert tld_group("photography") is TldGroup.NEW_GTLD
