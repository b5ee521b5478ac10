"""/appraise: one domain in, its appraisal out (the API's /score path, read-only).

The form takes what `dominus score` takes for one name: a listing's facts (asking price, age,
backlinks, archive snapshots: any of them makes the name a purchase) and whether to check its
availability (DNS then RDAP, over the network with the real providers). A field that is not a
number is the page's one-line error (422), as a bad option is on the command line."""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from dominus.api.services import Services
from dominus.pipeline.appraisal import (
    AppraisalInputError,
    AppraisalRequest,
    appraise,
    validate_requests,
)
from dominus.web.context import Web

router = APIRouter()
Field = Annotated[str, Query(max_length=40)]
# The listing's fields: (form name, label, whole number).
LISTING_FIELDS = (
    ("price", "asking price", False),
    ("age", "age in years", False),
    ("backlinks", "backlinks", True),
    ("wayback", "archive snapshots", True),
)
# The availability note when it was not asked for, in this page's words: the shared note names
# the command-line option and the API's parameter, which a browser has neither of.
NOT_CHECKED_HERE = {
    False: "not checked (tick “Check availability” to ask)",
    True: "not checked: a listed name is bought from its listing, not registered",
}


@dataclass(frozen=True)
class AppraiseForm:
    """The form as it was sent (shown again as typed)."""

    domain: str = ""
    price: str = ""
    age: str = ""
    backlinks: str = ""
    wayback: str = ""
    check_availability: bool = False

    def request(self) -> AppraisalRequest:
        """The appraisal asked for; AppraisalInputError names a field that is not a number."""
        values = {
            name: _number(label, getattr(self, name), whole)
            for name, label, whole in LISTING_FIELDS
        }
        return AppraisalRequest(
            self.domain,
            price=values["price"],
            age=values["age"],
            backlinks=_whole(values["backlinks"]),
            wayback=_whole(values["wayback"]),
        )


@router.get("/appraise")
def appraise_page(
    request: Request,
    api: Services,
    web: Web,
    domain: Annotated[str, Query(max_length=300)] = "",
    price: Field = "",
    age: Field = "",
    backlinks: Field = "",
    wayback: Field = "",
    check_availability: Field = "",
) -> Response:
    form = AppraiseForm(
        domain.strip(),
        price.strip(),
        age.strip(),
        backlinks.strip(),
        wayback.strip(),
        check_availability=bool(check_availability),
    )
    appraisal = None
    error = None
    if form.domain:
        try:
            [checked] = validate_requests([form.request()])
        except AppraisalInputError as problem:
            error = problem.message
        else:
            [result] = appraise(
                api.runtime.settings,
                api.runs,
                [checked],
                api.now().date(),
                check_availability=form.check_availability,
                stop=threading.Event(),
            )
            appraisal = result.to_dict()
            availability = appraisal["availability"]
            if not availability["checked"]:
                availability["note"] = NOT_CHECKED_HERE[result.candidate.purchase]
    return web.pages.render(
        request,
        "appraise.html",
        status_code=422 if error else 200,
        title="Appraise",
        form=form,
        listing_fields=LISTING_FIELDS,
        appraisal=appraisal,
        error=error,
    )


def _number(label: str, text: str, whole: bool) -> float | None:
    if not text:
        return None
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        raise AppraisalInputError(f"{label}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise AppraisalInputError(f"{label}: {text!r} is not a finite number")
    if whole and not value.is_integer():
        raise AppraisalInputError(f"{label}: {text!r} is not a whole number")
    return value


def _whole(value: float | None) -> int | None:
    return None if value is None else int(value)
