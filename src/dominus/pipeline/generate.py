"""Stage 1, candidate generation: keywords, brandable names and closeout domains become one
de-duplicated list of valid, normalised domains (first occurrence wins); every invalid input is
recorded with the reason."""

from __future__ import annotations

from typing import Any

from dominus.pipeline.model import RunInput
from dominus.pipeline.names import InvalidNameError, keyword_domain, normalise_domain


def generate_candidates(run_input: RunInput, default_tld: str) -> dict[str, Any]:
    """The stage's checkpoint: `candidates` (domain, unicode, source, keyword, expiry),
    `invalid` (input, source, reason) and the number of `duplicates` dropped."""
    seen: set[str] = set()
    found: list[dict[str, Any]] = []
    invalid: list[dict[str, str]] = []
    duplicates = 0

    def add(raw: str, source: str, build: Any, extra: dict[str, Any]) -> None:
        nonlocal duplicates
        try:
            name = build(raw)
        except InvalidNameError as error:
            invalid.append({"input": raw, "source": source, "reason": str(error)})
            return
        if name.ascii in seen:
            duplicates += 1
            return
        seen.add(name.ascii)
        found.append({"domain": name.ascii, "unicode": name.unicode, "source": source} | extra)

    for keyword in run_input.keywords:
        add(
            keyword,
            "keyword",
            lambda raw: keyword_domain(raw, default_tld),
            {"keyword": " ".join(keyword.lower().split())},
        )
    for name in run_input.brandable:
        add(name, "brandable", lambda raw: keyword_domain(raw, default_tld), {})
    for closeout in run_input.closeout:
        facts = {"age": closeout.age, "backlinks": closeout.backlinks, "wayback": closeout.wayback}
        add(closeout.domain, "closeout", normalise_domain, {"expiry": facts})
    return {"candidates": found, "invalid": invalid, "duplicates": duplicates}
