"""Stage 1, candidate generation: keywords, brandable names and closeout domains become one
de-duplicated list of valid, normalised domains; every invalid input is recorded with the
reason.

Duplicates: the first occurrence wins, except that a closeout (listed) name takes the place of
an earlier keyword or brandable entry of the same name, keeping its position and keyword. The
listing is how such a name can be had (it is registered, so a hand-registration would be
dropped), and it carries the facts and the price."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from dominus.domain_names import DomainName, InvalidNameError, keyword_domain, normalise_domain
from dominus.pipeline.model import RunInput
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
    position: dict[str, int] = {}  # domain → its index in `found`
    found: list[Candidate] = []
    invalid: list[InvalidInput] = []
    duplicates = 0

    def add(
        raw: str,
        source: CandidateSource,
        build: Callable[[str], DomainName],
        keyword: str | None = None,
        expiry: ExpiryFacts | None = None,
        price: float | None = None,
    ) -> None:
        nonlocal duplicates
        try:
            name = build(raw)
        except InvalidNameError as error:
            invalid.append(InvalidInput(raw, source, str(error)))
            return
        candidate = Candidate(name.ascii, name.unicode, source, keyword, expiry, price)
        index = position.get(name.ascii)
        if index is None:
            position[name.ascii] = len(found)
            found.append(candidate)
            return
        duplicates += 1
        earlier = found[index]
        if candidate.purchase and not earlier.purchase:
            found[index] = dataclasses.replace(candidate, keyword=earlier.keyword)

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
        add(
            closeout.domain,
            CandidateSource.CLOSEOUT,
            normalise_domain,
            expiry=facts,
            price=closeout.price,
        )
    return GenerateResult(tuple(found), tuple(invalid), duplicates)
