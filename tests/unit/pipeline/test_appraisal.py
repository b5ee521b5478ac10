"""The single-domain appraisal's own rules (ADR 0018): its input (stage 1's name rules, the
closeout CSV's ranges), the keyword phrase of a name, what is checked and what is not, and the
tier after the trademark and availability checks. That it scores as the pipeline does is
tests/integration/pipeline/test_appraisal.py."""

from __future__ import annotations

import dataclasses
from datetime import date
from typing import Any

import pytest

from dominus.domain_names import InvalidNameError, normalise_domain
from dominus.pipeline.appraisal import (
    AppraisalInputError,
    AppraisalRequest,
    Appraiser,
    keyword_phrases,
    validate_requests,
)
from dominus.pipeline.appraisal_result import (
    NOT_ASKED_FOR_A_PURCHASE,
    NOT_CHECKED,
    ActiveWeights,
)
from dominus.pipeline.model import MAX_LISTED_PRICE
from dominus.pipeline.runner import PipelineOptions
from dominus.providers.models import (
    Availability,
    DnsVerdict,
    KeywordStats,
    RdapRecord,
    StopSignal,
)
from dominus.providers.offline import offline_providers
from dominus.providers.sets import ProviderSet
from dominus.providers.setup import NoTrademarkSource
from dominus.scoring import Tier, Weights

TODAY = date(2026, 6, 1)


class NoLookups:
    """DNS and RDAP that must not be asked."""

    def check(self, domain: str, stop: StopSignal | None = None) -> DnsVerdict:
        raise AssertionError(f"DNS asked about {domain}")

    def lookup(self, domain: str, stop: Any = None) -> RdapRecord:
        raise AssertionError(f"RDAP asked about {domain}")


class Recording:
    """DNS and RDAP answering `dns` and `rdap`, recording what they were asked."""

    def __init__(self, dns: Availability, rdap: Availability | Exception) -> None:
        self.dns_answer = dns
        self.rdap_answer = rdap
        self.asked: list[tuple[str, str]] = []

    def check(self, domain: str, stop: StopSignal | None = None) -> DnsVerdict:
        self.asked.append(("dns", domain))
        return DnsVerdict(domain, self.dns_answer, f"dns says {self.dns_answer.value}")

    def lookup(self, domain: str, stop: Any = None) -> RdapRecord:
        self.asked.append(("rdap", domain))
        if isinstance(self.rdap_answer, Exception):
            raise self.rdap_answer
        return RdapRecord(domain, self.rdap_answer, detail="HTTP 404", source="rdap")


def providers(lookups: Any = None, **changes: Any) -> ProviderSet:
    lookups = lookups or NoLookups()
    return dataclasses.replace(offline_providers(), dns=lookups, rdap=lookups, **changes)


def appraiser(provider_set: ProviderSet | None = None, **options: Any) -> Appraiser:
    return Appraiser(
        provider_set or providers(), PipelineOptions(), ActiveWeights(Weights()), TODAY, **options
    )


def appraise(domain: str, provider_set: ProviderSet | None = None, **options: Any) -> Any:
    (name,) = validate_requests([AppraisalRequest(domain)])
    return appraiser(provider_set, **options).appraise(name)


# --- input -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "raw", ["", "zentrova", "bad..name", "has space.com", "-lead.com", "a" * 64 + ".com", "x.c0m"]
)
def test_an_invalid_name_is_refused_with_stage_1s_reason(raw: str) -> None:
    with pytest.raises(InvalidNameError) as stage_1:
        normalise_domain(raw)
    with pytest.raises(AppraisalInputError) as refused:
        validate_requests([AppraisalRequest(raw)])
    assert refused.value.code == "invalid_domain"
    assert refused.value.message == f"invalid domain {raw!r}: {stage_1.value}"


def test_names_are_normalised_as_stage_1_does() -> None:
    (name,) = validate_requests([AppraisalRequest("  Bücher.COM. ")])
    assert (name.name.ascii, name.name.unicode, name.listing) == (
        "xn--bcher-kva.com",
        "bücher.com",
        None,
    )


@pytest.mark.parametrize(
    ("facts", "field"),
    [
        ({"age": -0.5}, "age"),
        ({"age": 200.01}, "age"),
        ({"price": -1.0}, "price"),
        ({"price": MAX_LISTED_PRICE + 1.0}, "price"),
        ({"price": float("nan")}, "price"),
        ({"backlinks": -1}, "backlinks"),
        ({"wayback": 10**12 + 1}, "wayback"),
    ],
)
def test_listing_facts_outside_the_closeout_csv_ranges_are_refused(
    facts: dict[str, Any], field: str
) -> None:
    with pytest.raises(AppraisalInputError) as refused:
        validate_requests([AppraisalRequest("oldgardentools.com", **facts)])
    assert refused.value.code == "invalid_listing"
    assert refused.value.message.startswith(f"oldgardentools.com: {field} ")


def test_listing_facts_at_the_ends_of_their_ranges_make_a_purchase() -> None:
    facts: dict[str, Any] = {
        "age": 200.0,
        "price": float(MAX_LISTED_PRICE),
        "backlinks": 10**12,
        "wayback": 0,
    }
    (name,) = validate_requests([AppraisalRequest("oldgardentools.com", **facts)])
    assert name.listing is not None
    candidate = appraiser().candidate(name)
    assert candidate.purchase and candidate.price == MAX_LISTED_PRICE
    assert candidate.expiry is not None and candidate.expiry.age_years == 200.0


def test_one_listings_facts_go_with_one_name() -> None:
    with pytest.raises(AppraisalInputError, match="one listing") as refused:
        validate_requests([AppraisalRequest("a.com", price=5), AppraisalRequest("b.com")])
    assert refused.value.code == "invalid_listing"
    assert len(validate_requests([AppraisalRequest("a.com"), AppraisalRequest("b.com")])) == 2
    with pytest.raises(AppraisalInputError, match="at least one domain"):
        validate_requests([])


def test_a_keyword_phrase_is_found_by_its_words_run_together() -> None:
    data = {
        phrase: KeywordStats(phrase, 1000, 1.0)
        for phrase in ("solar panels", "solar pan els", "zentrova", "home gym")
    }
    assert keyword_phrases(data) == {"solarpanels": "solar pan els", "homegym": "home gym"}


# --- what is checked -------------------------------------------------------------------------
def test_without_check_availability_nothing_is_looked_up_and_the_output_says_so() -> None:
    appraisal = appraise("solarpanels.com")  # NoLookups fails the test if DNS or RDAP is asked
    document = appraisal.to_dict()
    assert document["availability"] == {
        "checked": False,
        "verdict": None,
        "source": None,
        "dns": None,
        "rdap": None,
        "note": NOT_CHECKED,
    }
    assert document["gates"]["availability"] is None
    assert document["tier"] == "recommended"  # the sample figures back it; availability unknown


def test_a_registration_is_checked_by_dns_then_rdap() -> None:
    lookups = Recording(Availability.AVAILABLE, Availability.AVAILABLE)
    appraisal = appraise("solarpanels.com", providers(lookups), check_availability=True)
    assert lookups.asked == [("dns", "solarpanels.com"), ("rdap", "solarpanels.com")]
    assert appraisal.to_dict()["availability"]["verdict"] == "available"
    assert appraisal.tier is Tier.RECOMMENDED


def test_a_name_dns_shows_registered_is_rejected_without_asking_rdap() -> None:
    lookups = Recording(Availability.REGISTERED, Availability.AVAILABLE)
    appraisal = appraise("solarpanels.com", providers(lookups), check_availability=True)
    assert lookups.asked == [("dns", "solarpanels.com")]
    tier, reason = appraisal.decision
    assert tier is Tier.REJECTED
    # As in a run: the check that stopped it, alone, when the score itself recommended it.
    assert reason == "not available to register (registered: dns: dns says registered)"


def test_a_failed_lookup_is_unknown_and_rejects_a_registration() -> None:
    lookups = Recording(Availability.AVAILABLE, ConnectionError("registry unreachable"))
    appraisal = appraise("solarpanels.com", providers(lookups), check_availability=True)
    availability = appraisal.to_dict()["availability"]
    assert availability["verdict"] == "unknown"
    assert "lookup failed: registry unreachable" in availability["note"]
    assert appraisal.tier is Tier.REJECTED


def test_a_listed_name_is_asked_rdap_for_its_dates_only_and_never_dropped() -> None:
    lookups = Recording(Availability.AVAILABLE, Availability.REGISTERED)
    (name,) = validate_requests([AppraisalRequest("oldgardentools.com", price=10, age=17.5)])
    appraisal = appraiser(providers(lookups), check_availability=True).appraise(name)
    assert lookups.asked == [("rdap", "oldgardentools.com")]
    document = appraisal.to_dict()
    assert document["availability"]["verdict"] == "registered"
    assert document["gates"]["availability"] is None
    assert "not available" not in document["tier_reason"]
    unchecked = appraiser().appraise(name).to_dict()["availability"]
    assert unchecked["note"] == NOT_ASKED_FOR_A_PURCHASE


def test_a_name_resembling_a_mark_is_rejected_whatever_its_score() -> None:
    document = appraise("applestore.com").to_dict()
    assert document["score"]["tier"] == "recommended"
    assert document["tier"] == "rejected"
    assert document["tier_reason"] == "trademark: blocked by mark apple (substring)"
    assert document["trademark"]["verdict"] == "blocked"
    assert document["gates"]["trademark"] is False
    assert document["recommended"] is False


def test_without_a_marks_source_no_name_is_recommended() -> None:
    document = appraise("solarpanels.com", providers(trademarks=NoTrademarkSource())).to_dict()
    assert document["trademark"] == {
        "checked": False,
        "verdict": "unverified",
        "mark": None,
        "rule": None,
        "source": "no marks source (TRADEMARK_MARKS_PATH unset)",
    }
    assert document["score"]["tier"] == "recommended"
    assert document["tier"] == "rejected"
    assert document["tier_reason"] == "trademark: not verified, no trademark source"


def test_without_a_marks_source_a_speculative_name_is_rejected_as_in_a_run() -> None:
    # One rule for runs and appraisals (ADR 0017): a name the gate did not clear is rejected,
    # the gate's words first, then why the score alone did not recommend it.
    document = appraise("zentrova.com", providers(trademarks=NoTrademarkSource())).to_dict()
    assert document["score"]["tier"] == "speculative"
    assert document["tier"] == "rejected"
    assert document["tier_reason"] == (
        "trademark: not verified, no trademark source; " + document["score"]["tier_reason"]
    )


def test_sample_data_is_labelled() -> None:
    document = appraise("zentrova.com").to_dict()
    assert document["sample_data"] is True
    assert document["providers"] == "offline (SAMPLE DATA)"
    real = providers(is_sample=False, label="files")
    assert appraise("zentrova.com", real).to_dict()["sample_data"] is False
