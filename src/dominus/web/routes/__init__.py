"""The dashboard's pages. A page whose data lands later (Portfolio) adds its router here and
its entry to `dominus.web.rendering.NAV_ITEMS`."""

from fastapi import APIRouter

from dominus.web.routes import (
    appraise,
    auth,
    dead_letters,
    jobs,
    overview,
    runs,
    schedules,
    workers,
)

ROUTERS: list[APIRouter] = [
    auth.router,
    overview.router,
    jobs.router,
    dead_letters.router,
    workers.router,
    schedules.router,
    runs.router,
    appraise.router,
]
