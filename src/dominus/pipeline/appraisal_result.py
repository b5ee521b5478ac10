"""What a single-domain appraisal finds, and its JSON document (`dominus score --json`, one item
of `GET /api/v1/score`).

The scoring engine's decision (`score.tier`, the same document a run's score stage stores) is
about the name as it stands. The appraisal's own `tier` adds the checks a run makes after
scoring, when they were made:
  - trademark (always, with the configured marks source): a name the gate does not clear is
    `rejected`, whatever its score: one resembling a mark, or, with no marks source, any name
    (the verdict is `unverified`), as in a run (the rule of `pipeline.tiers`, ADR 0017);
  - availability (only when asked, `--check-availability`): a name to hand-register that DNS or
    RDAP do not find available is `rejected`, as a run would drop it. A listed name (closeout or
    auction) is bought, not registered: RDAP is asked for its dates only and decides nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from dominus.pipeline.stage_results import Candidate, DnsAnswer, RdapAnswer, TrademarkEntry
from dominus.pipeline.tiers import trademark_phrase
from dominus.pipeline.trademark_gate import GateResult, TrademarkVerdict
from dominus.providers.data_sources import DataSources
from dominus.providers.models import Availability
from dominus.scoring import Score, Tier, Weights

NOT_CHECKED = (
    "availability not checked: the name is scored as it stands (ask with --check-availability, "
    "or check_availability=true in the API)"
)
NOT_ASKED_FOR_A_PURCHASE = (
    "availability not checked: a listed name is bought from its listing, not registered"
)


@dataclass(frozen=True)
class ActiveWeights:
    """The weights scoring used: the active weight set's, or the built-in defaults."""

    weights: Weights
    weight_set_id: int | None = None
    name: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "weight_set_id": self.weight_set_id,
            "name": self.name,
            "weights": self.weights.to_dict(),
        }


@dataclass(frozen=True)
class TrademarkCheck:
    result: GateResult
    source: str  # what the marks came from (the providers' label), or why there were none

    @property
    def checked(self) -> bool:
        return self.result.verdict is not TrademarkVerdict.UNVERIFIED

    def to_dict(self) -> dict[str, Any]:
        return {
            "checked": self.checked,
            "verdict": self.result.verdict.value,
            "mark": self.result.matched_mark,
            "rule": self.result.rule,
            "source": self.source,
        }


@dataclass(frozen=True)
class AvailabilityCheck:
    """DNS then RDAP for a name to hand-register (RDAP not asked once DNS shows it registered,
    as in a run); RDAP alone, for its dates, for a listed name. Nothing when not asked."""

    checked: bool
    purchase: bool
    dns: DnsAnswer | None = None
    rdap: RdapAnswer | None = None

    @property
    def verdict(self) -> Availability | None:
        if not self.checked:
            return None
        if self.dns is not None and self.dns.availability is not Availability.AVAILABLE:
            return self.dns.availability
        return self.rdap.availability if self.rdap is not None else Availability.UNKNOWN

    @property
    def passes(self) -> bool | None:
        """None: not a gate (not checked, or a listed name, which is bought)."""
        if not self.checked or self.purchase:
            return None
        return self.verdict is Availability.AVAILABLE

    @property
    def source(self) -> str | None:
        """Who answered last: "dns", or the RDAP answer's source (rdap, whois, sample, file)."""
        if self.rdap is not None:
            return self.rdap.source
        return "dns" if self.dns is not None else None

    @property
    def note(self) -> str:
        if not self.checked:
            return NOT_ASKED_FOR_A_PURCHASE if self.purchase else NOT_CHECKED
        answer = self.rdap if self.rdap is not None else self.dns
        detail = f"{self.source}: {answer.detail}" if answer is not None else "no answer"
        if self.purchase:
            return f"listed name, bought not registered (dates only): {detail}"
        if self.verdict is Availability.AVAILABLE:
            return f"available to register: {detail}"
        if self.verdict is Availability.REGISTERED:
            return f"registered: {detail}"
        return f"availability could not be verified: {detail}"

    def to_dict(self) -> dict[str, Any]:
        verdict = self.verdict
        return {
            "checked": self.checked,
            "verdict": verdict.value if verdict is not None else None,
            "source": self.source,
            "dns": self.dns.to_json() if self.dns is not None else None,
            "rdap": self.rdap.to_json() if self.rdap is not None else None,
            "note": self.note,
        }


def final_tier(
    score: Score, trademark: TrademarkCheck, availability: AvailabilityCheck
) -> tuple[Tier, str]:
    """The appraisal's tier and its reason in words: the run's rule (`tiers.final_tier`, ADR
    0017): a name the trademark gate does not clear (blocked, or unverified for want of a marks
    source) is rejected with the gate's words first, and, when it was asked, so is a name that is
    not available to register."""
    result = trademark.result
    gate = trademark_phrase(TrademarkEntry(result.verdict, result.matched_mark, result.rule), "")
    blocks = [gate] if gate is not None else []
    if availability.passes is False:
        blocks.append(f"not available to register ({availability.note})")
    if not blocks:
        return score.tier, score.tier_reason
    if score.recommended:
        return Tier.REJECTED, "; ".join(blocks)
    return Tier.REJECTED, "; ".join([*blocks, score.tier_reason])


@dataclass(frozen=True)
class Appraisal:
    candidate: Candidate
    keyword_looked_up: str  # the key of the keyword figures (found or not)
    score: Score
    trademark: TrademarkCheck
    availability: AvailabilityCheck
    weights: ActiveWeights
    providers: str  # the providers' label, e.g. "offline (SAMPLE DATA)"
    sample_data: bool
    appraised_on: date
    data_sources: DataSources = field(default_factory=DataSources)

    @property
    def decision(self) -> tuple[Tier, str]:
        return final_tier(self.score, self.trademark, self.availability)

    @property
    def tier(self) -> Tier:
        return self.decision[0]

    def to_dict(self) -> dict[str, Any]:
        tier, reason = self.decision
        candidate = self.candidate
        return {
            "domain": candidate.domain,
            "unicode_domain": candidate.unicode,
            "acquisition": candidate.acquisition,
            "listed_price": candidate.price,
            "tier": tier.value,
            "tier_reason": reason,
            "recommended": tier is Tier.RECOMMENDED,
            "gates": self.score.gates
            | {"trademark": self.trademark.result.verdict is TrademarkVerdict.CLEAR}
            | {"availability": self.availability.passes},
            "keyword_looked_up": self.keyword_looked_up,
            "trademark": self.trademark.to_dict(),
            "availability": self.availability.to_dict(),
            "weights": self.weights.to_dict(),
            "providers": self.providers,
            "sample_data": self.sample_data,
            "data_sources": self.data_sources.to_dict(),
            "appraised_on": self.appraised_on.isoformat(),
            "currency": self.score.currency,
            "score": self.score.to_dict(),
        }
