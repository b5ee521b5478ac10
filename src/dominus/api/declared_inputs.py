"""A change is asked for only with the inputs its endpoint declares.

FastAPI drops a query parameter the endpoint does not declare, and a body the endpoint does not
read, without a word. For a read that costs nothing; for a change it turns a narrow request
into a wide one: `DELETE /dlq?older_than_day=30` (a typo) purged every dead-letter entry, and
`POST /portfolio/import?dry-run=true` imported for real. So a POST, PUT, PATCH or DELETE with a
query parameter its route does not declare, or with a body on a route that takes none, is
refused (422 `invalid_request`) before the endpoint runs. Reads keep ignoring what they do not
know (a cache-buster in a GET is common and harmless).

A route takes a body when it declares a body parameter, or documents one it reads itself
(`openapi_extra` with a `requestBody`: the CSV import)."""

from __future__ import annotations

from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute

READS = frozenset({"GET", "HEAD", "OPTIONS"})
# Per route (routes are not hashable): the route itself, kept so that its id is never reused
_DECLARED: dict[int, tuple[APIRoute, frozenset[str], bool]] = {}


async def refuse_undeclared_inputs(request: Request) -> None:
    """The guard, as a dependency of every API route."""
    route = request.scope.get("route")
    if request.method in READS or not isinstance(route, APIRoute) or not route.include_in_schema:
        return  # a route left out of the schema only answers 405 for a method the path lacks
    known, takes_body = _declared(route)
    problems: list[dict[str, object]] = [
        {
            "type": "extra_forbidden",
            "loc": ("query", name),
            "msg": f"this endpoint takes no such parameter{_choices(known)}",
            "input": request.query_params.get(name),
        }
        for name in sorted(set(request.query_params) - known)
    ]
    if not takes_body and await request.body():
        problems.append(
            {
                "type": "extra_forbidden",
                "loc": ("request",),
                "msg": "this endpoint takes no body",
                "input": None,
            }
        )
    if problems:
        raise RequestValidationError(problems)


def _declared(route: APIRoute) -> tuple[frozenset[str], bool]:
    """(the query parameters the route declares, whether it takes a body)."""
    found = _DECLARED.get(id(route))
    if found is None or found[0] is not route:
        found = (route, *_read_declared(route))
        _DECLARED[id(route)] = found
    return found[1], found[2]


def _read_declared(route: APIRoute) -> tuple[frozenset[str], bool]:
    names: set[str] = set()
    takes_body = False
    pending: list[Dependant] = [route.dependant]
    while pending:
        dependant = pending.pop()
        names.update(field.alias for field in dependant.query_params)
        takes_body = takes_body or bool(dependant.body_params)
        pending.extend(dependant.dependencies)
    documented = bool(route.openapi_extra and "requestBody" in route.openapi_extra)
    return frozenset(names), takes_body or documented


def _choices(known: frozenset[str]) -> str:
    return f" (it takes: {', '.join(sorted(known))})" if known else " (it takes none)"
