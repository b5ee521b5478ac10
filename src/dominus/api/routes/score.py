"""/api/v1/score: appraise single names, read-only (ADR 0018)."""

from __future__ import annotations

import threading
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response
from pydantic import StringConstraints

from dominus.api.params import DIGITS_ONLY
from dominus.api.routes.jobs import ERRORS, NO_STORE
from dominus.api.services import Services
from dominus.pipeline.appraisal import (
    AppraisalRequest,
    appraise,
    validate_requests,
)
from dominus.pipeline.documents import AppraisalOut
from dominus.pipeline.model import MAX_LISTED_PRICE

router = APIRouter(tags=["score"])
# Names one request appraises: each one's evidence is a page of figures, and a portfolio is a
# pipeline run's job, not a query string's.
MAX_DOMAINS = 20
# The closeout CSV's ranges (CloseoutDomain); checked again there, so they cannot drift apart.
MAX_AGE_YEARS = 200
MAX_COUNT = 10**12
DomainText = Annotated[str, StringConstraints(min_length=1, max_length=300, pattern="^[^\x00]*$")]


@router.get("/score", response_model=list[AppraisalOut], responses=ERRORS)
def score(
    response: Response,
    api: Services,
    domain: Annotated[
        list[DomainText],
        Query(
            min_length=1,
            max_length=MAX_DOMAINS,
            description="A domain to appraise (repeat the parameter for several). An invalid "
            "name is a 422 `invalid_domain` with the reason.",
        ),
    ],
    price: Annotated[
        float | None,
        Query(
            ge=0,
            le=MAX_LISTED_PRICE,
            allow_inf_nan=False,
            description="A listing's asking price: the name is bought, not registered.",
        ),
    ] = None,
    age: Annotated[
        float | None,
        Query(ge=0, le=MAX_AGE_YEARS, allow_inf_nan=False, description="Age in years."),
    ] = None,
    backlinks: Annotated[int | None, Query(ge=0, le=MAX_COUNT), DIGITS_ONLY] = None,
    wayback: Annotated[
        int | None,
        Query(ge=0, le=MAX_COUNT, description="Archive snapshots."),
        DIGITS_ONLY,
    ] = None,
    check_availability: Annotated[
        bool,
        Query(
            description="Ask DNS and RDAP (the network, with the real providers) whether the "
            "name can be registered; otherwise availability is not checked."
        ),
    ] = False,
) -> Any:
    """Appraise each `domain` as a pipeline run would score it: every signal and the evidence
    behind it (comparable sales used, keyword figures, expiry facts), EV, buy max, every figure
    of the money gate, confidence, weighted score and thresholds, and the tier with its reason.
    `price`, `age`, `backlinks` and `wayback` are a listing's facts (one `domain` only; 422
    `invalid_listing` otherwise) and make the name a purchase. The trademark gate runs with
    the configured marks source; `sample_data` says when the figures are the bundled sample."""
    response.headers.update(NO_STORE)
    names = validate_requests(
        [AppraisalRequest(name, price, age, backlinks, wayback) for name in domain]
    )
    appraisals = appraise(
        api.runtime.settings,
        api.runs,
        names,
        api.now().date(),
        check_availability=check_availability,
        stop=threading.Event(),
    )
    return [AppraisalOut.of(appraisal) for appraisal in appraisals]
