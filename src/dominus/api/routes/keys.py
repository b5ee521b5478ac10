"""/api/v1/keys: the rate-limit keys every process shares (list, resume), ADR 0053."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Response

from dominus.api.routes.jobs import ERRORS, NO_STORE
from dominus.api.services import Services
from dominus.jobs.documents import RateLimitKeyOut
from dominus.jobs.rate_limit import KEY_PATTERN

router = APIRouter(tags=["keys"])
Key = Annotated[
    str,
    Path(pattern=KEY_PATTERN, description="The key: 1 to 200 of letters, digits and _.:@+-"),
]


@router.get("/keys", response_model=list[RateLimitKeyOut], responses=ERRORS)
def keys(response: Response, api: Services) -> list[RateLimitKeyOut]:
    """Every rate-limit key configured (RATE_LIMITS) or paused, by key: its limit, and its pause
    while one lasts."""
    response.headers.update(NO_STORE)
    return [RateLimitKeyOut.of(state) for state in api.runtime.limiters.list()]


@router.post("/keys/{key}/resume", response_model=RateLimitKeyOut, responses=ERRORS)
def resume(key: Key, api: Services) -> RateLimitKeyOut:
    """End the key's pause now, for every process. 404 for a key never configured nor
    paused."""
    return RateLimitKeyOut.of(api.runtime.limiters.resume(key))
