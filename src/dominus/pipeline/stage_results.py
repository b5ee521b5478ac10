"""What each stage hands to the next: one frozen dataclass per stage's result, saved as the
stage's checkpoint (a JSON document in `pipeline_checkpoints`) and read back when a run resumes.

Compatibility (ADR 0016): `from_json` reads every checkpoint the code before these types wrote
(string-keyed dicts, the same keys), because a run in flight during an upgrade resumes from its
checkpoints. A key that code could leave out (a stage that failed before writing it) reads as
the value its `.get()` default stood for, and every field added since has a default. Captured
examples of that format are kept as test fixtures (tests/unit/pipeline/checkpoints_before_0016).
`to_json` writes the same keys, leaving out an optional field that is None where the old code
left the key out, so a checkpoint read and written again is unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum
from typing import Any, TypeVar

from dominus.pipeline.model import Stage
from dominus.pipeline.trademark_gate import TrademarkVerdict
from dominus.providers.models import Availability, ExpiryFacts

Json = dict[str, Any]
# The scoring engine's own document of one score (`Score.to_dict()`): its shape belongs to
# dominus.scoring, which changes it; the pipeline stores it whole and reads a few fields.
ScoreDocument = dict[str, Any]


class CandidateSource(StrEnum):
    KEYWORD = "keyword"
    BRANDABLE = "brandable"
    CLOSEOUT = "closeout"


# How a candidate would be acquired, as every output shows it.
PURCHASE = "purchase"  # bought from a closeout or auction listing
REGISTRATION = "registration"  # hand-registered at a registrar


# --- stage 1: generate -----------------------------------------------------------------------
@dataclass(frozen=True)
class Candidate:
    domain: str  # what DNS and RDAP see: `xn--bcher-kva.com`
    unicode: str  # what a person reads: `bücher.com`
    source: CandidateSource
    keyword: str | None = None  # the phrase a keyword candidate came from
    expiry: ExpiryFacts | None = None  # what a closeout list says (closeout candidates only)
    price: float | None = None  # a closeout listing's asking price (None: not given)

    @property
    def purchase(self) -> bool:
        """Bought from a closeout or auction listing (registered by definition), not
        hand-registered: the availability stages do not drop it (ADR 0016)."""
        return self.source is CandidateSource.CLOSEOUT

    @property
    def acquisition(self) -> str:
        return PURCHASE if self.purchase else REGISTRATION

    def to_json(self) -> Json:
        data: Json = {"domain": self.domain, "unicode": self.unicode, "source": self.source.value}
        if self.keyword is not None:
            data["keyword"] = self.keyword
        if self.expiry is not None:
            data["expiry"] = {
                "age": self.expiry.age_years,
                "backlinks": self.expiry.backlinks,
                "wayback": self.expiry.wayback_snapshots,
            }
        if self.price is not None:
            data["price"] = self.price
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Candidate:
        facts = data.get("expiry")
        return cls(
            domain=data["domain"],
            unicode=data.get("unicode") or data["domain"],
            source=CandidateSource(data["source"]),
            keyword=data.get("keyword"),
            expiry=None if facts is None else _expiry_facts(facts),
            price=None if data.get("price") is None else float(data["price"]),
        )


def _expiry_facts(facts: Mapping[str, Any]) -> ExpiryFacts:
    age = facts.get("age")
    return ExpiryFacts(
        age_years=None if age is None else float(age),
        backlinks=facts.get("backlinks"),
        wayback_snapshots=facts.get("wayback"),
    )


@dataclass(frozen=True)
class InvalidInput:
    input: str
    source: CandidateSource
    reason: str

    def to_json(self) -> Json:
        return {"input": self.input, "source": self.source.value, "reason": self.reason}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> InvalidInput:
        return cls(data["input"], CandidateSource(data["source"]), data["reason"])


@dataclass(frozen=True)
class GenerateResult:
    """Stage 1: valid, normalised, de-duplicated candidates, and the inputs that were not."""

    candidates: tuple[Candidate, ...] = ()
    invalid: tuple[InvalidInput, ...] = ()
    duplicates: int = 0

    def domains(self) -> list[str]:
        return [candidate.domain for candidate in self.candidates]

    def registrations(self) -> list[str]:
        """The names to hand-register: those the availability stages check."""
        return [candidate.domain for candidate in self.candidates if not candidate.purchase]

    def purchases(self) -> list[str]:
        """The names bought from a listing: registered by definition, never dropped for it."""
        return [candidate.domain for candidate in self.candidates if candidate.purchase]

    def to_json(self) -> Json:
        return {
            "candidates": [candidate.to_json() for candidate in self.candidates],
            "invalid": [entry.to_json() for entry in self.invalid],
            "duplicates": self.duplicates,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GenerateResult:
        return cls(
            candidates=tuple(Candidate.from_json(item) for item in data.get("candidates", ())),
            invalid=tuple(InvalidInput.from_json(item) for item in data.get("invalid", ())),
            duplicates=int(data.get("duplicates", 0)),
        )


# --- stages 2 and 3: DNS and RDAP lookups ----------------------------------------------------
@dataclass(frozen=True)
class DnsAnswer:
    availability: Availability
    detail: str = ""

    def to_json(self) -> Json:
        return {"availability": self.availability.value, "detail": self.detail}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DnsAnswer:
        return cls(Availability(data["availability"]), data.get("detail") or "")


@dataclass(frozen=True)
class RdapAnswer:
    availability: Availability
    detail: str = ""
    registered_at: date | None = None
    expires_at: date | None = None
    source: str = "rdap"  # which protocol answered: "rdap", or "whois" where RDAP has no service

    def to_json(self) -> Json:
        return {
            "availability": self.availability.value,
            "detail": self.detail,
            "registered_at": _iso(self.registered_at),
            "expires_at": _iso(self.expires_at),
            "source": self.source,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RdapAnswer:
        return cls(
            availability=Availability(data["availability"]),
            detail=data.get("detail") or "",
            registered_at=_date(data.get("registered_at")),
            expires_at=_date(data.get("expires_at")),
            source=data.get("source") or "rdap",
        )


def _iso(value: date | None) -> str | None:
    return value.isoformat() if value is not None else None


def _date(value: Any) -> date | None:
    return None if value is None else date.fromisoformat(str(value))


def _available(answers: Mapping[str, DnsAnswer | RdapAnswer], domains: Iterable[str]) -> list[str]:
    """The names found available, in the order given (unchecked or unknown ones do not pass)."""
    return [
        domain
        for domain in domains
        if (answer := answers.get(domain)) is not None
        and answer.availability is Availability.AVAILABLE
    ]


@dataclass(frozen=True)
class DnsResult:
    """Stage 2: domain → DNS's answer, for the names it got to."""

    results: Mapping[str, DnsAnswer] = field(default_factory=dict)

    def available(self, domains: Iterable[str]) -> list[str]:
        return _available(self.results, domains)

    def to_json(self) -> Json:
        return {"results": {domain: answer.to_json() for domain, answer in self.results.items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DnsResult:
        answers = data.get("results", {})
        return cls({domain: DnsAnswer.from_json(answer) for domain, answer in answers.items()})


@dataclass(frozen=True)
class RdapResult:
    """Stage 3: domain → the registry's answer, for the names it got to."""

    results: Mapping[str, RdapAnswer] = field(default_factory=dict)

    def available(self, domains: Iterable[str]) -> list[str]:
        return _available(self.results, domains)

    def to_json(self) -> Json:
        return {"results": {domain: answer.to_json() for domain, answer in self.results.items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RdapResult:
        answers = data.get("results", {})
        return cls({domain: RdapAnswer.from_json(answer) for domain, answer in answers.items()})


# --- stage 4: score --------------------------------------------------------------------------
@dataclass(frozen=True)
class ScoreResult:
    """Stage 4: the weights used (None: the stage failed before choosing them) and domain → the
    scoring engine's document."""

    weights: Mapping[str, float] | None = None
    scores: Mapping[str, ScoreDocument] = field(default_factory=dict)

    def to_json(self) -> Json:
        data: Json = {"scores": dict(self.scores)}
        if self.weights is not None:
            data["weights"] = dict(self.weights)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ScoreResult:
        weights = data.get("weights")
        return cls(
            weights=None if weights is None else dict(weights),
            scores=dict(data.get("scores", {})),
        )


# --- stage 5: trademark ----------------------------------------------------------------------
@dataclass(frozen=True)
class TrademarkEntry:
    verdict: TrademarkVerdict
    mark: str | None = None  # the mark matched, as listed in the source
    rule: str | None = None  # "exact" | "substring" | "edit_distance"

    def to_json(self) -> Json:
        return {"verdict": self.verdict.value, "mark": self.mark, "rule": self.rule}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrademarkEntry:
        return cls(TrademarkVerdict(data["verdict"]), data.get("mark"), data.get("rule"))


# What a name the gate never saw gets: never recommended.
UNVERIFIED = TrademarkEntry(TrademarkVerdict.UNVERIFIED)


@dataclass(frozen=True)
class TrademarkResult:
    """Stage 5: whether a marks source answered (None: the stage failed before asking it) and
    domain → the gate's verdict."""

    source_available: bool | None = None
    verdicts: Mapping[str, TrademarkEntry] = field(default_factory=dict)

    def verdict(self, domain: str) -> TrademarkEntry:
        return self.verdicts.get(domain, UNVERIFIED)

    def to_json(self) -> Json:
        data: Json = {
            "verdicts": {domain: entry.to_json() for domain, entry in self.verdicts.items()}
        }
        if self.source_available is not None:
            data["source_available"] = self.source_available
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrademarkResult:
        verdicts = data.get("verdicts", {})
        return cls(
            source_available=data.get("source_available"),
            verdicts={
                domain: TrademarkEntry.from_json(entry) for domain, entry in verdicts.items()
            },
        )


# --- the results of a run's stages -----------------------------------------------------------
StageResult = GenerateResult | DnsResult | RdapResult | ScoreResult | TrademarkResult
RESULT_TYPES: dict[Stage, type[StageResult]] = {
    Stage.GENERATE: GenerateResult,
    Stage.DNS: DnsResult,
    Stage.RDAP: RdapResult,
    Stage.SCORE: ScoreResult,
    Stage.TRADEMARK: TrademarkResult,
}
R = TypeVar("R", GenerateResult, DnsResult, RdapResult, ScoreResult, TrademarkResult)


def result_from_json(stage: Stage, data: Mapping[str, Any]) -> StageResult:
    return RESULT_TYPES[stage].from_json(data)


class RunState:
    """The results of a run's finished stages (a resumed run starts from its checkpoints). Each
    stage's result is read through its own typed property; reading a stage that has not
    finished is a programming error (the runner runs them in order)."""

    def __init__(self, results: Mapping[Stage, StageResult] | None = None) -> None:
        self._results: dict[Stage, StageResult] = {}
        for stage, result in (results or {}).items():
            self.record(stage, result)

    @classmethod
    def from_checkpoints(cls, checkpoints: Mapping[Stage, Mapping[str, Any]]) -> RunState:
        return cls({stage: result_from_json(stage, data) for stage, data in checkpoints.items()})

    def __contains__(self, stage: Stage) -> bool:
        return stage in self._results

    def finished(self) -> list[Stage]:
        return [stage for stage in Stage if stage in self._results]

    def record(self, stage: Stage, result: StageResult) -> None:
        if not isinstance(result, RESULT_TYPES[stage]):
            raise TypeError(f"stage {stage.value} cannot record a {type(result).__name__}")
        self._results[stage] = result

    @property
    def generate(self) -> GenerateResult:
        return self._get(Stage.GENERATE, GenerateResult)

    @property
    def dns(self) -> DnsResult:
        return self._get(Stage.DNS, DnsResult)

    @property
    def rdap(self) -> RdapResult:
        return self._get(Stage.RDAP, RdapResult)

    @property
    def score(self) -> ScoreResult:
        return self._get(Stage.SCORE, ScoreResult)

    @property
    def trademark(self) -> TrademarkResult:
        return self._get(Stage.TRADEMARK, TrademarkResult)

    def _get(self, stage: Stage, kind: type[R]) -> R:
        result = self._results.get(stage)
        if not isinstance(result, kind):
            raise LookupError(f"stage {stage.value} has not finished")
        return result
