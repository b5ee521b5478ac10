"""/history: per job type, jobs completed, attempts failed, jobs dead-lettered and run time over
the last 24 hours (hourly bars) or 7 days (daily bars), from the hourly `job_metrics` history,
beside the counters' totals since the database began (ADR 0054, ADR 0060)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from dominus.api.services import ApiServices, Services
from dominus.jobs.activity import TypeActivity, Window
from dominus.jobs.metrics_model import COMPLETED, FAILED, HISTORY_KEPT
from dominus.web.charts import throughput_chart
from dominus.web.context import Web
from dominus.web.throughput import Bar, Throughput

router = APIRouter()
WindowName = Literal["24h", "7d"]


@dataclass(frozen=True)
class WindowShape:
    label: str
    bucket: timedelta
    buckets: int
    interval: str  # a bar is one of these
    time_format: str


WINDOWS: dict[str, WindowShape] = {
    "24h": WindowShape("the last 24 hours", timedelta(hours=1), 24, "hour", "%H:%M"),
    "7d": WindowShape("the last 7 days", timedelta(days=1), 7, "day", "%m-%d"),
}


def window_ending(shape: WindowShape, now: datetime) -> Window:
    """The window's intervals end with the one under way (the hour or the UTC day)."""
    now = now.astimezone(UTC)
    if shape.bucket >= timedelta(days=1):
        current = now.replace(hour=0, minute=0, second=0, microsecond=0)
    else:
        current = now.replace(minute=0, second=0, microsecond=0)
    return Window(current - shape.bucket * (shape.buckets - 1), shape.bucket, shape.buckets)


def as_throughput(window: Window, rows: list[TypeActivity]) -> Throughput:
    """The bars of `rows` added up, in the overview chart's shape."""
    bars = []
    for index in range(window.buckets):
        start, end = window.bounds(index)
        completed = sum(row.completed[index] for row in rows)
        failed = sum(row.failed[index] for row in rows)
        bars.append(Bar(start, end, completed, failed))
    return Throughput(bars, window.start)


@router.get("/history")
async def history(
    request: Request,
    api: Services,
    web: Web,
    window: WindowName = "24h",
    type: Annotated[str | None, Query(max_length=200)] = None,
) -> Response:
    shape = WINDOWS[window]
    now = api.now()
    span = window_ending(shape, now)
    found, totals = await run_in_threadpool(_read, api, span, now)
    job_type = (type or "").strip() or None
    shown = [found[job_type]] if job_type in found else ([] if job_type else list(found.values()))
    throughput = as_throughput(span, shown)
    return web.pages.render(
        request,
        "history.html",
        title="History",
        window=window,
        windows=WINDOWS,
        shape=shape,
        span=span,
        job_type=job_type,
        rows=list(found.values()),
        totals=totals,
        throughput=throughput,
        chart=throughput_chart(throughput, shape.time_format),
        chart_interval=shape.interval,
        history_days=HISTORY_KEPT.days,
    )


AllTime = dict[str, dict[str, float | None]]  # job type → the counters' totals


def _read(api: ApiServices, span: Window, now: datetime) -> tuple[dict[str, TypeActivity], AllTime]:
    found = api.store.activity(span, now)
    metrics = api.store.metric_totals()
    totals: AllTime = {}
    for job_type in found:
        total, count = metrics.durations.get(job_type, (0.0, 0.0))
        totals[job_type] = {
            "completed": metrics.counter(COMPLETED, job_type),
            "failed": metrics.counter(FAILED, job_type),
            "mean_run_seconds": total / count if count else None,
        }
    return found, totals
