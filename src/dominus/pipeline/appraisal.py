"""Appraising single names (`dominus score`, `GET /api/v1/score`; ADR 0018).

An appraisal is a pipeline run of one name, minus the stages a single lookup cannot or should
not make by default:
  - the name passes stage 1's rules (`normalise_domain`; a name without a TLD is refused, not
    given the default TLD) and becomes a `Candidate` through stage 1 itself
    (`generate_candidates`): a hand-registration, or, when listing facts are given (price, age,
    backlinks, archive snapshots: the closeout CSV's columns and ranges), a purchase from a
    listing, exactly as a closeout entry would;
  - its keyword figures: a keyword candidate's phrase, as `dominus run -k "solar panels"` would
    give `solarpanels.com`, when the keyword data has a phrase whose words, run together, are the
    name's label; otherwise the label itself (as a brandable or closeout name is looked up);
  - it is scored by the score stage's own path: `scoring_input` (shared with the stage), the
    active weight set and calibrated thresholds read as the runner reads them, the settings'
    scoring config and price table,
    the providers of the settings (or the offline SAMPLE data), the database's date;
  - the trademark gate always runs, with the configured marks source; DNS and RDAP are asked
    only when `check_availability` is set (they go to the network with the real providers).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from typing import Literal

import httpx
from pydantic import ValidationError

from dominus.domain_names import DomainName, InvalidNameError, normalise_domain
from dominus.errors import ConfigurationError, InvalidInputError
from dominus.pipeline.appraisal_result import (
    ActiveWeights,
    Appraisal,
    AvailabilityCheck,
    TrademarkCheck,
)
from dominus.pipeline.generate import generate_candidates
from dominus.pipeline.model import CloseoutDomain, RunInput
from dominus.pipeline.runner import PipelineOptions
from dominus.pipeline.scoring_input import keyword_key, scoring_input
from dominus.pipeline.scoring_sets import weight_sets_of, with_active_thresholds
from dominus.pipeline.settings import PipelineSettings, pipeline_options
from dominus.pipeline.stage_results import Candidate, DnsAnswer, RdapAnswer
from dominus.pipeline.store import PipelineStore
from dominus.pipeline.trademark_gate import TrademarkGate
from dominus.pipeline.valuing import Valuer
from dominus.providers.data_sources import DataSource, DataSources
from dominus.providers.models import Availability, KeywordStats, Mark, StopSignal
from dominus.providers.rate_gate import RateGate
from dominus.providers.sets import ProviderSet
from dominus.providers.setup import check_provider_choice, open_providers
from dominus.providers.trademarks import MarksFileSource
from dominus.scoring import ComparablesIndex, Weights, score_domain
from dominus.valuation import Appraisal as ValuedAppraisal

# A lookup that fails with one of these is "could not be verified", never an error page.
LOOKUP_FAILURES: tuple[type[BaseException], ...] = (OSError, TimeoutError, httpx.HTTPError)


class AppraisalInputError(InvalidInputError):
    """An appraisal's input is invalid (the message says which and why; the code is
    `invalid_request`, `invalid_domain` or `invalid_listing`)."""


@dataclass(frozen=True)
class AppraisalRequest:
    """One name, and what a listing says about it (any of which makes it a purchase)."""

    domain: str
    price: float | None = None
    age: float | None = None
    backlinks: int | None = None
    wayback: int | None = None

    @property
    def listed(self) -> bool:
        return any(
            value is not None for value in (self.price, self.age, self.backlinks, self.wayback)
        )


@dataclass(frozen=True)
class ValidName:
    name: DomainName
    listing: CloseoutDomain | None  # None: a hand-registration


def validate_requests(requests: Sequence[AppraisalRequest]) -> list[ValidName]:
    """Every request checked before anything is looked up; the first problem is the error."""
    if not requests:
        raise AppraisalInputError("give at least one domain to appraise")
    if len(requests) > 1 and any(request.listed for request in requests):
        raise AppraisalInputError(
            "price, age, backlinks and wayback describe one listing: give them with one "
            f"domain, not {len(requests)}",
            code="invalid_listing",
        )
    return [_valid(request) for request in requests]


def _valid(request: AppraisalRequest) -> ValidName:
    try:
        name = normalise_domain(request.domain)
    except InvalidNameError as error:
        raise AppraisalInputError(
            f"invalid domain {request.domain!r}: {error}", code="invalid_domain"
        ) from None
    if not request.listed:
        return ValidName(name, None)
    try:
        listing = CloseoutDomain(
            domain=name.ascii,
            price=request.price,
            age=request.age,
            backlinks=request.backlinks,
            wayback=request.wayback,
        )
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in issue['loc'])} {issue['input']!r}: {issue['msg']}"
            for issue in error.errors()
        )
        raise AppraisalInputError(f"{name.unicode}: {problems}", code="invalid_listing") from None
    return ValidName(name, listing)


def active_weights(store: PipelineStore) -> ActiveWeights:
    """The weights the next score stage would use (PipelineRunner._scoring_setup's reading):
    the set activated last, or the defaults."""
    active = weight_sets_of(store.engine).active()
    if active is None:
        return ActiveWeights(Weights())
    try:
        weights = Weights.from_dict(active.values).validate()
    except ValueError as error:
        raise ConfigurationError(
            f"the active weight set {active.id} ({active.name}) is invalid: {error}"
        ) from None
    return ActiveWeights(weights, active.id, active.name)


def keyword_phrases(keyword_data: Mapping[str, KeywordStats]) -> dict[str, str]:
    """Label → the keyword phrase whose words run together are that label ("solarpanels" →
    "solar panels"); of several, the first in sorted order."""
    phrases: dict[str, str] = {}
    for phrase in sorted(keyword_data):
        if " " in phrase:
            phrases.setdefault("".join(phrase.split()), phrase)
    return phrases


def data_sources_of(providers: ProviderSet, marks: Sequence[Mark] | None) -> DataSources:
    """What the keyword figures, the sales and the marks came from: the configured files as
    read, or the offline files (the bundled SAMPLE or files of their own), or nothing."""
    sources = providers.sources or _offline_sources(providers)
    return dataclasses.replace(sources, marks=_marks_source(providers, marks))


def _offline_sources(providers: ProviderSet) -> DataSources:
    kind: Literal["file", "sample"] = "sample" if providers.is_sample else "file"
    return DataSources(
        keywords=DataSource(kind, "csv", len(providers.keyword_data)),
        comps=DataSource(kind, "csv", len(providers.comparable_sales)),
    )


def _marks_source(providers: ProviderSet, marks: Sequence[Mark] | None) -> DataSource:
    source = providers.trademarks
    if not isinstance(source, MarksFileSource):
        return DataSource("none", note="TRADEMARK_MARKS_PATH unset")
    if marks is None:
        return DataSource("none", "marks", path=str(source.path), note=f"{source.path} unreadable")
    kind: Literal["file", "sample"] = "sample" if providers.is_sample else "file"
    return DataSource(kind, "marks", len(marks), str(source.path))


class Appraiser:
    """Appraises names with one set of providers, weights, config and date."""

    def __init__(
        self,
        providers: ProviderSet,
        options: PipelineOptions,
        weights: ActiveWeights,
        today: date,
        *,
        check_availability: bool = False,
        stop: StopSignal | None = None,
    ) -> None:
        self.providers = providers
        self.options = options
        self.weights = weights
        self.today = today
        self.check_availability = check_availability
        self.stop = stop or threading.Event()
        self.comparables = ComparablesIndex(providers.comparable_sales, options.scoring)
        self.valuer = (
            Valuer(options.value_model, providers.comparable_sales)
            if options.value_model is not None
            else None
        )
        self._values: dict[str, ValuedAppraisal] = {}
        marks = providers.trademarks.marks()
        self.gate = TrademarkGate(marks)
        self.data_sources = data_sources_of(providers, marks)
        self.phrases = keyword_phrases(providers.keyword_data)

    def candidate(self, valid: ValidName) -> Candidate:
        """The candidate stage 1 makes of this name (see the module docstring)."""
        name = valid.name
        label = name.label
        phrase = None if label in self.providers.keyword_data else self.phrases.get(label)
        run_input = RunInput(
            keywords=[phrase] if phrase else [],
            brandable=[] if phrase or valid.listing else [name.ascii],
            closeout=[valid.listing] if valid.listing else [],
        )
        generated = generate_candidates(run_input, name.tld)
        if len(generated.candidates) != 1 or generated.candidates[0].domain != name.ascii:
            raise AssertionError(f"stage 1 made {generated} of {name.ascii}")  # not reached
        return generated.candidates[0]

    def appraise(self, valid: ValidName) -> Appraisal:
        candidate = self.candidate(valid)
        inputs = scoring_input(
            candidate,
            self.providers.keyword_data,
            self.comparables,
            self.today,
            self.options.renewal_cost,
            value=self._value(candidate.domain),
        )
        score = score_domain(inputs, self.weights.weights, self.options.scoring, self.today)
        return Appraisal(
            candidate=candidate,
            keyword_looked_up=keyword_key(candidate),
            score=score,
            trademark=TrademarkCheck(self.gate.check(candidate.domain), self._marks_source()),
            availability=self._availability(candidate),
            weights=self.weights,
            providers=self.providers.label,
            sample_data=self.providers.is_sample,
            appraised_on=self.today,
            data_sources=self.data_sources,
        )

    def value_ahead(self, domains: Sequence[str]) -> None:
        """Value many names in one pass (much faster than one by one); `appraise` uses them."""
        if self.valuer is not None and domains:
            self._values.update(self.valuer.appraise(domains, self.today))

    def _value(self, domain: str) -> ValuedAppraisal | None:
        if self.valuer is None:
            return None
        if domain not in self._values:
            self.value_ahead([domain])
        return self._values.pop(domain)

    def _marks_source(self) -> str:
        source = self.providers.trademarks
        if not isinstance(source, MarksFileSource):
            return "no marks source (TRADEMARK_MARKS_PATH unset)"
        where = (
            "the bundled sample marks (SAMPLE DATA)" if self.providers.is_sample else source.path
        )
        if not self.gate.available:
            return f"marks source unavailable: {where}"
        return str(where)

    def _availability(self, candidate: Candidate) -> AvailabilityCheck:
        purchase = candidate.purchase
        if not self.check_availability:
            return AvailabilityCheck(checked=False, purchase=purchase)
        dns = None
        if not purchase:  # DNS can only say "registered", which a listed name is
            dns = self._dns(candidate.domain)
            if dns.availability is not Availability.AVAILABLE:
                return AvailabilityCheck(checked=True, purchase=purchase, dns=dns)
        return AvailabilityCheck(True, purchase, dns, self._rdap(candidate.domain))

    def _dns(self, domain: str) -> DnsAnswer:
        try:
            verdict = self.providers.dns.check(domain, self.stop)
        except LOOKUP_FAILURES as error:
            return DnsAnswer(Availability.UNKNOWN, f"lookup failed: {error}")
        return DnsAnswer(verdict.availability, verdict.detail)

    def _rdap(self, domain: str) -> RdapAnswer:
        try:
            record = self.providers.rdap.lookup(domain, self.stop)
        except LOOKUP_FAILURES as error:
            return RdapAnswer(Availability.UNKNOWN, f"lookup failed: {error}")
        return RdapAnswer(
            availability=record.availability,
            detail=record.detail,
            registered_at=record.registered_at,
            expires_at=record.expires_at,
            source=record.source,
        )


@contextmanager
def appraiser(
    settings: PipelineSettings,
    store: PipelineStore,
    today: date,
    *,
    providers: str | None = None,
    check_availability: bool = False,
    stop: StopSignal | None = None,
    gate: RateGate | None = None,
) -> Iterator[Appraiser]:
    """An Appraiser on the settings' providers (`providers`: "real", "offline" or "sample"
    instead), the active weight set and the scoring settings; its network clients closed on
    exit. The sample beside the user's data files is refused first (ProviderChoiceError)."""
    check_provider_choice(settings, providers)
    options = pipeline_options(settings)
    options = dataclasses.replace(
        options, scoring=with_active_thresholds(store.engine, options.scoring)
    )
    weights = active_weights(store)
    with open_providers(settings, providers, gate=gate) as provider_set:
        yield Appraiser(
            provider_set,
            options,
            weights,
            today,
            check_availability=check_availability,
            stop=stop,
        )


def appraise(
    settings: PipelineSettings,
    store: PipelineStore,
    names: Sequence[ValidName],
    today: date,
    *,
    providers: str | None = None,
    check_availability: bool = False,
    stop: StopSignal | None = None,
) -> list[Appraisal]:
    """Appraise each name (`validate_requests`'s), in order."""
    with appraiser(
        settings,
        store,
        today,
        providers=providers,
        check_availability=check_availability,
        stop=stop,
    ) as service:
        service.value_ahead([name.name.ascii for name in names])
        return [service.appraise(name) for name in names]
