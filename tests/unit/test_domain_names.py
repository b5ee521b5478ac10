"""Stage 1's name rules and candidate generation (table-driven)."""

from __future__ import annotations

import pytest

from dominus.domain_names import InvalidNameError, keyword_domain, normalise_domain
from dominus.pipeline.generate import generate_candidates
from dominus.pipeline.model import RunInput
from dominus.pipeline.stage_results import CandidateSource, InvalidInput
from dominus.providers.models import ExpiryFacts


@pytest.mark.parametrize(
    ("raw", "ascii_name", "unicode_name"),
    [
        ("Example.COM", "example.com", "example.com"),
        ("  example.com.  ", "example.com", "example.com"),
        ("bücher.de", "xn--bcher-kva.de", "bücher.de"),
        ("XN--BCHER-KVA.de", "xn--bcher-kva.de", "bücher.de"),
        ("my-site.co.uk", "my-site.co.uk", "my-site.co.uk"),
        ("7eleven.com", "7eleven.com", "7eleven.com"),
        ("ＥＸＡＭＰＬＥ.com", "example.com", "example.com"),  # full-width, mapped by UTS #46
        ("a" * 63 + ".com", "a" * 63 + ".com", "a" * 63 + ".com"),
        # A-labels typed as ASCII: valid ones are kept (lower-cased) and shown decoded.
        ("xn--bcher-kva.com", "xn--bcher-kva.com", "bücher.com"),
        ("XN--BCHER-KVA.COM", "xn--bcher-kva.com", "bücher.com"),
        ("example.xn--p1ai", "example.xn--p1ai", "example.рф"),  # an IDN TLD (.рф)
        ("пример.рф", "xn--e1afmkfd.xn--p1ai", "пример.рф"),
    ],
)
def test_valid_names_are_normalised(raw: str, ascii_name: str, unicode_name: str) -> None:
    name = normalise_domain(raw)
    assert (name.ascii, name.unicode) == (ascii_name, unicode_name)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("", "empty"),
        ("example", "no TLD"),
        ("a..com", "empty label"),
        ("-abc.com", "letters, digits and inner hyphens"),
        ("abc-.com", "letters, digits and inner hyphens"),
        ("ab--cd.com", "positions 3 and 4"),
        ("under_score.com", "letters, digits and inner hyphens"),
        ("exa mple.com", "spaces"),
        ("a" * 64 + ".com", "longer than 63"),
        (".".join(["a" * 60] * 5), "longer than 253"),
        ("example.c0m", "not a valid top-level domain"),
        ("example.c", "not a valid top-level domain"),
        # A-labels are held to the rules their Unicode form would be.
        ("xn--a.com", "'xn--a' is not a valid A-label"),  # punycode that decodes to U+0080
        ("xn--ls8h.com", "'xn--ls8h' is not a valid A-label.*U\\+1F4A9"),  # 💩, as when typed
        ("💩.com", "not a valid internationalised name.*U\\+1F4A9"),
        ("xn--.com", "'xn--' is not a valid A-label"),
        ("xn--abc-.com", "'xn--abc-' is not a valid A-label"),
        ("xn--ab--c.com", "'xn--ab--c' is not a valid A-label"),  # not punycode at all
        ("example.xn--a", "'xn--a' is not a valid A-label"),  # the TLD too
        ("xn--bcher-kva.xn--ls8h", "'xn--ls8h' is not a valid A-label"),
    ],
)
def test_invalid_names_say_why(raw: str, reason: str) -> None:
    with pytest.raises(InvalidNameError, match=reason):
        normalise_domain(raw)


@pytest.mark.parametrize(
    ("keyword", "tld", "expected"),
    [
        ("home gym", "com", "homegym.com"),
        ("  Home   Gym ", "io", "homegym.io"),
        ("homegym.net", "com", "homegym.net"),  # already a domain
        ("cloud", "co.uk", "cloud.co.uk"),
    ],
)
def test_keywords_become_domains(keyword: str, tld: str, expected: str) -> None:
    assert keyword_domain(keyword, tld).ascii == expected


def test_generation_dedupes_first_wins_and_records_invalid_inputs() -> None:
    run_input = RunInput(
        keywords=["Home Gym", "solar panels"],
        brandable=["zentrova", "HOMEGYM.com", "bad..name", "zentrova.io", "old-tools.net"],
        closeout=[
            {"domain": "old-tools.net", "age": 12.5, "backlinks": 40, "wayback": 7},
            {"domain": "old-tools.net", "age": 1},
        ],
    )
    result = generate_candidates(run_input, "com")
    assert [c.domain for c in result.candidates] == [
        "homegym.com",
        "solarpanels.com",
        "zentrova.com",
        "zentrova.io",
        "old-tools.net",
    ]
    first = result.candidates[0]
    assert first.source is CandidateSource.KEYWORD  # the first occurrence wins
    assert first.keyword == "home gym"
    # ... but a listing takes a hand entry's place (the first listing of the name wins).
    assert result.candidates[-1].source is CandidateSource.CLOSEOUT
    assert result.candidates[-1].expiry == ExpiryFacts(
        age_years=12.5, backlinks=40, wayback_snapshots=7
    )
    assert result.duplicates == 3
    assert result.invalid == (
        InvalidInput("bad..name", CandidateSource.BRANDABLE, "empty label (two dots in a row)"),
    )


def test_invalid_a_labels_are_recorded_like_any_invalid_name() -> None:
    run_input = RunInput(brandable=["xn--a", "xn--ls8h", "XN--BCHER-KVA"])
    result = generate_candidates(run_input, "com")
    assert [c.domain for c in result.candidates] == ["xn--bcher-kva.com"]
    assert result.candidates[0].unicode == "bücher.com"
    assert [(entry.input, entry.source) for entry in result.invalid] == [
        ("xn--a", "brandable"),
        ("xn--ls8h", "brandable"),
    ]
    assert all("not a valid A-label" in entry.reason for entry in result.invalid)


def test_run_input_needs_a_name() -> None:
    with pytest.raises(ValueError, match="at least one"):
        RunInput()


def test_a_listed_name_replaces_a_hand_entry_in_place_with_its_price() -> None:
    """A name typed as a keyword and also on a closeout list is bought from the listing: as a
    hand-registration the availability check would drop it (it is registered)."""
    run_input = RunInput(
        keywords=["old garden tools", "home gym"],
        closeout=[{"domain": "oldgardentools.com", "age": 17.5, "price": 1850}],
    )
    result = generate_candidates(run_input, "com")
    assert [c.domain for c in result.candidates] == ["oldgardentools.com", "homegym.com"]
    listed = result.candidates[0]
    assert (listed.source, listed.purchase, listed.price) == (CandidateSource.CLOSEOUT, True, 1850)
    assert listed.keyword == "old garden tools"  # the keyword's figures still apply
    assert listed.expiry == ExpiryFacts(age_years=17.5)
    assert result.registrations() == ["homegym.com"]
    assert result.purchases() == ["oldgardentools.com"]
    assert result.duplicates == 1
