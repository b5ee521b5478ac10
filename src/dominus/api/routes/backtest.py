"""/api/v1/outcomes, /api/v1/backtest/report(.png), /api/v1/weights."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response
from fastapi.responses import JSONResponse

from dominus.api.params import DIGITS_ONLY
from dominus.api.routes.jobs import ERRORS, NO_STORE, TOO_LARGE, with_errors
from dominus.api.schemas import ErrorBody
from dominus.api.services import ApiServices, Services
from dominus.backtest.documents import OutcomeOut, RecordedOutcomeOut, WeightsOut
from dominus.backtest.outcomes import OutcomeIn
from dominus.backtest.report import ReportOptions
from dominus.backtest.service import BacktestService
from dominus.jobs.documents import dumped

router = APIRouter(tags=["backtest"])


def backtest(api: ApiServices, *, with_queue: bool = False) -> BacktestService:
    runtime = api.runtime
    return BacktestService(
        runtime.settings, runtime.engine, runtime.clock, api.queue if with_queue else None
    )


@router.post(
    "/outcomes",
    status_code=201,
    response_model=RecordedOutcomeOut,
    responses=with_errors(
        TOO_LARGE | {400: {"model": ErrorBody, "description": "A body that is not even text"}}
    ),
)
def record_outcome(body: OutcomeIn, api: Services) -> Any:
    """Record an outcome. A sale with a price enqueues BACKTEST_BUILD (one while one is pending).
    An invalid name, a price with a drop or expiry, or a date after today is a 422
    `invalid_outcome`."""
    recorded = backtest(api, with_queue=True).record([body])
    outcome = RecordedOutcomeOut.recorded(recorded.outcomes[0], recorded.build_job_id)
    return JSONResponse(dumped(outcome), status_code=201, headers=NO_STORE)


@router.get("/outcomes", response_model=list[OutcomeOut], responses=ERRORS)
def list_outcomes(
    response: Response,
    api: Services,
    outcome_type: Annotated[
        Literal["sold", "dropped", "expired"] | None, Query(alias="type")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000), DIGITS_ONLY] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000), DIGITS_ONLY] = 0,
) -> list[OutcomeOut]:
    """Outcomes, newest first."""
    response.headers.update(NO_STORE)
    found = backtest(api).store.list_outcomes(outcome_type=outcome_type, limit=limit, offset=offset)
    return [OutcomeOut.of(outcome) for outcome in found]


@router.get("/backtest/report", response_model=dict[str, Any], responses=ERRORS)
def report(
    response: Response,
    api: Services,
    folds: Annotated[int, Query(ge=1, le=50, description="Walk-forward folds."), DIGITS_ONLY] = 3,
) -> dict[str, Any]:
    """The backtest report of the snapshot as `dominus backtest report --json` prints it (the
    snapshot is built by BACKTEST_BUILD; this reads it and writes nothing)."""
    response.headers.update(NO_STORE)
    return backtest(api).report(ReportOptions(folds=folds))


@router.get(
    "/backtest/report.png",
    response_class=Response,
    responses=with_errors({200: {"content": {"image/png": {}}, "description": "The plot"}}),
)
def report_png(api: Services) -> Response:
    """Predicted against realised prices (log scales), the conservative region marked."""
    return Response(backtest(api).plot(), media_type="image/png", headers=NO_STORE)


@router.get("/weights", response_model=WeightsOut, responses=ERRORS)
def weights(response: Response, api: Services) -> WeightsOut:
    """The weights scoring uses now, the defaults, and the active weight set."""
    response.headers.update(NO_STORE)
    return backtest(api).weights_in_force()
