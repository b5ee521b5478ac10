"""Bearer-token authentication for /api/v1 (when DOMINUS_API_TOKEN is set)."""

from __future__ import annotations

import hmac
from collections.abc import Callable

from fastapi import HTTPException, Request


def require_token(token: str | None) -> Callable[[Request], None]:
    """A dependency that checks `Authorization: Bearer <token>` in constant time."""
    expected = token.encode() if token else None

    def check(request: Request) -> None:
        if expected is None:
            return
        header = request.headers.get("authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), expected):
            raise HTTPException(
                status_code=401,
                detail="a valid `Authorization: Bearer <token>` header is required",
                headers={"WWW-Authenticate": "Bearer"},
            )

    return check
