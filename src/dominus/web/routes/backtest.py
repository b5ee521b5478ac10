"""/outcomes (what names finally did: sold, dropped, expired; newest first) and /backtest (the
report of the backtest snapshot as `dominus backtest report` prints it, with its plot), read
through the backtest service the CLI and /api/v1/outcomes and /backtest/report use. Nothing
here writes: the snapshot is built by BACKTEST_BUILD."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from dominus.api.services import ApiServices, Services
from dominus.backtest import figures
from dominus.backtest.documents import OutcomeOut
from dominus.backtest.report import DEFAULT_FOLDS, ReportOptions
from dominus.backtest.service import BacktestService
from dominus.jobs.documents import dumped
from dominus.portfolio.store import PortfolioReader
from dominus.web.context import Web

router = APIRouter()
PAGE_SIZE = 100
OutcomeType = Literal["sold", "dropped", "expired"]
OUTCOME_TYPES: tuple[OutcomeType, ...] = ("sold", "dropped", "expired")


def figure(name: str, value: Any) -> str:
    return figures.figure(name, value, missing="—")


def _backtest(api: ApiServices) -> BacktestService:
    runtime = api.runtime
    return BacktestService(runtime.settings, runtime.engine, runtime.clock)


@router.get("/outcomes")
def outcomes(
    request: Request,
    api: Services,
    web: Web,
    type: OutcomeType | Literal[""] = "",
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> Response:
    # One more than a page: whether there is a next one.
    found = _backtest(api).store.list_outcomes(
        outcome_type=type or None, limit=PAGE_SIZE + 1, offset=offset
    )
    held = {entry.domain for entry in PortfolioReader(api.runtime.engine).list_entries(status=None)}
    query = {"type": type} if type else {}
    return web.pages.render(
        request,
        "outcomes.html",
        title="Outcomes",
        outcomes=[dumped(OutcomeOut.of(outcome)) for outcome in found[:PAGE_SIZE]],
        held=held,
        outcome_types=OUTCOME_TYPES,
        chosen=type,
        offset=offset,
        next_query=urlencode(query | {"offset": offset + PAGE_SIZE})
        if len(found) > PAGE_SIZE
        else None,
        first_query=urlencode(query) if offset else None,
    )


@router.get("/backtest")
def backtest_report(
    request: Request,
    api: Services,
    web: Web,
    folds: Annotated[int, Query(ge=1, le=50)] = DEFAULT_FOLDS,
) -> Response:
    report = _backtest(api).report(ReportOptions(folds=folds))
    return web.pages.render(
        request,
        "backtest.html",
        title="Backtest",
        report=report,
        folds=folds,
        metric_labels=figures.METRIC_LABELS,
        figure=figure,
    )


@router.get("/backtest/report.png")
def backtest_plot(api: Services) -> Response:
    """The report's plot (`backtest report --plot`): predicted against realised prices."""
    return Response(
        _backtest(api).plot(), media_type="image/png", headers={"Cache-Control": "no-store"}
    )
