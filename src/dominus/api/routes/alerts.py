"""/api/v1/alerts: the portfolio's renewal alerts (raised by the RENEWAL_CHECK job)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from dominus.api.params import DIGITS_ONLY
from dominus.api.routes.jobs import ERRORS, NO_STORE
from dominus.api.services import Services
from dominus.renewals.documents import AlertOut
from dominus.renewals.store import AlertStore

router = APIRouter(tags=["alerts"])
AlertId = Annotated[int, Path(ge=1, le=2**63 - 1, description="The alert id."), DIGITS_ONLY]


@router.get("/alerts", response_model=list[AlertOut], responses=ERRORS)
def list_alerts(
    response: Response,
    api: Services,
    include_closed: Annotated[
        bool,
        Query(alias="all", description="Also acknowledged, escalated and resolved alerts."),
    ] = False,
) -> list[AlertOut]:
    """Open renewal alerts, the most severe and the nearest renewal first."""
    response.headers.update(NO_STORE)
    alerts = AlertStore(api.runtime.engine).alerts(include_closed=include_closed)
    return [AlertOut.of(alert) for alert in alerts]


@router.post("/alerts/ack", response_model=list[AlertOut], responses=ERRORS)
def acknowledge_all(api: Services) -> list[AlertOut]:
    """Acknowledge every open alert (what `dominus alerts ack --all` does): the alerts it
    acknowledged, the most severe first; an empty list when none was open."""
    alerts = AlertStore(api.runtime.engine).acknowledge_all(api.now())
    return [AlertOut.of(alert) for alert in alerts]


@router.post("/alerts/{alert_id}/ack", response_model=AlertOut, responses=ERRORS)
def acknowledge(alert_id: AlertId, api: Services) -> AlertOut:
    """Acknowledge the alert (again: unchanged); it stays acknowledged in later checks. 404
    for an unknown id."""
    alert = AlertStore(api.runtime.engine).acknowledge(alert_id, api.now())
    return AlertOut.of(alert)
