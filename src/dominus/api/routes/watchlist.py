"""/api/v1/watchlist: the watched domains (polled by the WATCHLIST_POLL job)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Response
from fastapi.responses import JSONResponse

from dominus.api.routes.jobs import ERRORS, NO_STORE, TOO_LARGE, with_errors
from dominus.api.schemas import ErrorBody
from dominus.api.services import ApiServices, Services
from dominus.api.watchlist_schemas import WatchEntryIn
from dominus.watchlist.documents import WatchEntryOut
from dominus.watchlist.model import (
    InvalidWatchDomainError,
    WatchlistEntryNotFoundError,
    watched_domain,
)
from dominus.watchlist.store import WatchlistStore, checked_notes

router = APIRouter(tags=["watchlist"])
Domain = Annotated[str, Path(max_length=300, description="The watched domain.")]


def _store(api: ApiServices) -> WatchlistStore:
    return WatchlistStore(api.runtime.engine)


def _watched(domain: str) -> str:
    """The stored form of a path's name; a name that is no domain cannot be watched: 404."""
    try:
        return watched_domain(domain)
    except InvalidWatchDomainError as error:
        raise WatchlistEntryNotFoundError(f"{error.message}; it is not on the watchlist") from None


@router.get("/watchlist", response_model=list[WatchEntryOut], responses=ERRORS)
def list_entries(response: Response, api: Services) -> list[WatchEntryOut]:
    """Every watched domain, by name: last status, last check, whether it was notified."""
    response.headers.update(NO_STORE)
    return [WatchEntryOut.of(entry) for entry in _store(api).entries()]


@router.post(
    "/watchlist",
    status_code=201,
    response_model=WatchEntryOut,
    responses=with_errors(
        TOO_LARGE | {400: {"model": ErrorBody, "description": "A body that is not even text"}}
    ),
)
def add(body: WatchEntryIn, api: Services) -> Any:
    """Watch a domain: 201 with its `Location`; 409 when it is already watched. A name you
    already hold (an active portfolio entry) is watched too, with `in_portfolio` true."""
    domain, notes = watched_domain(body.domain), checked_notes(body.notes)
    entry = _store(api).add(domain, notes, api.now())
    return JSONResponse(
        WatchEntryOut.of(entry).model_dump(mode="json"),
        status_code=201,
        headers={"Location": f"/api/v1/watchlist/{entry.domain}"},
    )


@router.get("/watchlist/{domain}", response_model=WatchEntryOut, responses=ERRORS)
def get_entry(domain: Domain, response: Response, api: Services) -> WatchEntryOut:
    """One watched domain (404 when it is not watched)."""
    response.headers.update(NO_STORE)
    return WatchEntryOut.of(_store(api).get(_watched(domain)))


@router.delete("/watchlist/{domain}", status_code=204, responses=ERRORS)
def remove(domain: Domain, api: Services) -> Response:
    """Stop watching a domain: 204; 404 when it is not watched."""
    _store(api).remove(_watched(domain))
    return Response(status_code=204)
