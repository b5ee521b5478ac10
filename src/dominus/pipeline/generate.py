"""Stage 1, candidate generation: keywords, brandable names and closeout domains become one
de-duplicated list of valid, normalised domains (first occurrence wins); every invalid input is
recorded with the reason."""

from __future__ import annotations

from collections.abc import Callable

from dominus.pipeline.model import RunInput
from dominus.pipeline.names import DomainName, InvalidNameError, keyword_domain, normalise_domain
from dominus.pipeline.stage_results import (
    Candidate,
    CandidateSource,
    GenerateResult,
    InvalidInput,
)
from dominus.providers.models import ExpiryFacts


def generate_candidates(run_input: RunInput, default_tld: str) -> GenerateResult:
    """The stage's result: the candidates, the invalid inputs (with the reason) and the number
    of duplicates dropped."""
    seen: set[str] = set()
    found: list[Candidate] = []
    invalid: list[InvalidInput] = []
    duplicates = 0

    def add(
        raw: str,
        source: CandidateSource,
        build: Callable[[str], DomainName],
        keyword: str | None = None,
        expiry: ExpiryFacts | None = None,
    ) -> None:
        nonlocal duplicates
        try:
            name = build(raw)
        except InvalidNameError as error:
            invalid.append(InvalidInput(raw, source, str(error)))
            return
        if name.ascii in seen:
            duplicates += 1
            return
        seen.add(name.ascii)
        found.append(Candidate(name.ascii, name.unicode, source, keyword=keyword, expiry=expiry))

    def keyword_name(raw: str) -> DomainName:
        return keyword_domain(raw, default_tld)

    for keyword in run_input.keywords:
        phrase = " ".join(keyword.lower().split())
        add(keyword, CandidateSource.KEYWORD, keyword_name, keyword=phrase)
    for name in run_input.brandable:
        add(name, CandidateSource.BRANDABLE, keyword_name)
    for closeout in run_input.closeout:
        facts = ExpiryFacts(
            age_years=closeout.age,
            backlinks=closeout.backlinks,
            wayback_snapshots=closeout.wayback,
        )
        add(closeout.domain, CandidateSource.CLOSEOUT, normalise_domain, expiry=facts)
    return GenerateResult(tuple(found), tuple(invalid), duplicates)
