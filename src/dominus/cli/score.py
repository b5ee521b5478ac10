"""`dominus score DOMAIN…`: appraise single names with the pipeline's own scoring path."""

from __future__ import annotations

import math
import threading
from pathlib import Path

import typer

from dominus.cli.appraisal_output import print_appraisal
from dominus.cli.output import print_json
from dominus.cli.runtime import open_runtime
from dominus.pipeline.appraisal import (
    AppraisalInputError,
    AppraisalRequest,
    appraise,
    validate_requests,
)
from dominus.pipeline.store import PipelineStore
from dominus.providers.setup import SAMPLE


def score(
    domains: list[str] | None = typer.Argument(
        None, help="Domains to appraise, e.g. cloudnest.com."
    ),
    from_file: Path | None = typer.Option(
        None,
        "--from-file",
        help="A file of names to appraise, one a line (blank lines and # comments skipped).",
    ),
    price: str | None = typer.Option(
        None, "--price", help="A listing's asking price: the name is bought, not registered."
    ),
    age: str | None = typer.Option(None, "--age", help="Years since first registration."),
    backlinks: str | None = typer.Option(None, "--backlinks", help="Backlinks to the name."),
    wayback: str | None = typer.Option(None, "--wayback", help="Archive snapshots of the name."),
    check_availability: bool = typer.Option(
        False,
        "--check-availability",
        help="Ask DNS and RDAP (the network, with the real providers) whether it can be "
        "registered; without it availability is not checked.",
    ),
    sample: bool = typer.Option(
        False, "--sample", help="The bundled SAMPLE data (no network) for every fact."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list, one per domain."),
) -> None:
    """Appraise each DOMAIN as a pipeline run would score it: signals and their evidence, EV,
    buy max, the money gate, confidence, tier and its reason. --price/--age/--backlinks/
    --wayback are a listing's facts (one DOMAIN; the closeout CSV's ranges) and make the name a
    purchase. The trademark gate runs with the configured marks. Bad input: one line, exit 2."""
    request = AppraisalRequest(
        domain="",
        price=_number("--price", price),
        age=_number("--age", age),
        backlinks=_count("--backlinks", backlinks),
        wayback=_count("--wayback", wayback),
    )
    wanted = [*(domains or []), *(_names_in(from_file) if from_file is not None else [])]
    if not wanted:
        raise AppraisalInputError("give a DOMAIN to appraise, or --from-file FILE")
    names = validate_requests([_for(domain, request) for domain in wanted])
    runtime = open_runtime(read_only=True)
    appraisals = appraise(
        runtime.settings,
        PipelineStore(runtime.engine),
        names,
        runtime.clock().date(),
        providers=SAMPLE if sample else None,
        check_availability=check_availability,
        stop=threading.Event(),
    )
    if as_json:
        # The appraisal's own document, as GET /score returns it (checked there against
        # AppraisalOut); checking each one here too cost a quarter of a 10,000-name run.
        print_json([appraisal.to_dict() for appraisal in appraisals])
        return
    for appraisal in appraisals:
        print_appraisal(appraisal)


def _names_in(path: Path) -> list[str]:
    """The names of a file, one a line; a file that cannot be read is one line, exit 2."""
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise AppraisalInputError(f"cannot read {path}: {error}") from None
    names = [line.split("#", 1)[0].strip() for line in lines]
    return [name for name in names if name]


def _for(domain: str, facts: AppraisalRequest) -> AppraisalRequest:
    return AppraisalRequest(domain, facts.price, facts.age, facts.backlinks, facts.wayback)


def _number(option: str, text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        raise AppraisalInputError(f"{option} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise AppraisalInputError(f"{option} {text!r} is not a finite number")
    return value


def _count(option: str, text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        raise AppraisalInputError(f"{option} {text!r} is not a whole number") from None
