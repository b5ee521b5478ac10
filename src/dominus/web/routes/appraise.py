"""/appraise: one domain in, its appraisal out (the API's /score path, read-only)."""

from __future__ import annotations

import threading
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


@router.get("/appraise")
def appraise_page(
    request: Request,
    api: Services,
    web: Web,
    domain: Annotated[str, Query(max_length=300)] = "",
) -> Response:
    name = domain.strip()
    appraisal = None
    error = None
    if name:
        try:
            [checked] = validate_requests([AppraisalRequest(name, None, None, None, None)])
        except AppraisalInputError as problem:
            error = problem.message
        else:
            [result] = appraise(
                api.runtime.settings,
                api.runs,
                [checked],
                api.now().date(),
                check_availability=False,
                stop=threading.Event(),
            )
            appraisal = result.to_dict()
    return web.pages.render(
        request,
        "appraise.html",
        status_code=422 if error else 200,
        title="Appraise",
        domain=name,
        appraisal=appraisal,
        error=error,
    )
