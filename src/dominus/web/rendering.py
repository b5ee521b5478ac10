"""Templates and the small helpers they use (ADR 0023): Jinja2 with autoescaping, the
navigation, times and durations in words."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from dominus import __version__
from dominus.providers.gate_waits import describe_wait
from dominus.web.guard import PageAuth, page_auth_of


@dataclass(frozen=True)
class NavItem:
    path: str
    label: str


# The pages, in the navigation's order. The extension point for a new page (as the Portfolio
# page was added: its `NavItem` here and its router in dominus.web.routes): nothing else needs
# to know about them.
NAV_ITEMS: list[NavItem] = [
    NavItem("/", "Overview"),
    NavItem("/jobs", "Jobs"),
    NavItem("/dead-letters", "Dead letters"),
    NavItem("/history", "History"),
    NavItem("/workers", "Workers"),
    NavItem("/schedules", "Schedules"),
    NavItem("/queues", "Queues"),
    NavItem("/runs", "Runs"),
    NavItem("/appraise", "Appraise"),
    NavItem("/portfolio", "Portfolio"),
    NavItem("/outcomes", "Outcomes"),
    NavItem("/backtest", "Backtest"),
]


def _parse_time(value: Any) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def when(value: Any) -> str:
    """A time as `2030-01-01 12:00:05 UTC` (— when unknown)."""
    moment = _parse_time(value)
    return "—" if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def duration(seconds: Any) -> str:
    """Seconds in words: `45 s`, `3 min 20 s`, `2 h 5 min`, `3 d 4 h`."""
    if seconds is None:
        return "—"
    total = int(max(0.0, float(seconds)))
    if total < 60:
        return f"{total} s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


def seconds(value: Any) -> str:
    """A stage's time: `0.42 s` under ten seconds (stages are often that quick), else as
    `duration` says it."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "—"
    if value < 10:
        return f"{value:.2f} s"
    return duration(value)


def age(value: Any, now: datetime) -> str:
    """How long ago `value` was (or `in …` for a future time)."""
    moment = _parse_time(value)
    if moment is None:
        return "—"
    seconds = (now - moment).total_seconds()
    return f"{duration(seconds)} ago" if seconds >= 0 else f"in {duration(-seconds)}"


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


def number(value: Any, digits: int = 0) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return f"{value:,.{digits}f}"


def for_people(value: float) -> float:
    """A figure rounded as a person says it: whole units below 1,000, three significant digits
    above (12437.23 → 12400, 237715.45 → 238000)."""
    magnitude = abs(value)
    if magnitude < 1000:
        return float(round(value))
    step = 10.0 ** (math.floor(math.log10(magnitude)) - 2)
    return round(value / step) * step


def money(value: Any, currency: str = "USD") -> str:
    """An amount for people: `$12,400`, `−$1,020`, `12,400 EUR` (— when unknown)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return "—"
    rounded = for_people(float(value))
    sign = "−" if rounded < 0 else ""
    digits = f"{abs(rounded):,.0f}"
    return f"{sign}${digits}" if currency == "USD" else f"{sign}{digits} {currency}"


def build_environment() -> Environment:
    environment = Environment(
        loader=PackageLoader("dominus.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters.update(
        when=when,
        duration=duration,
        pretty_json=pretty_json,
        number=number,
        age=age,
        money=money,
        seconds=seconds,
        waiting=describe_wait,
    )
    environment.globals.update(nav_items=NAV_ITEMS, version=__version__)
    return environment


class Pages:
    """Renders templates into responses, with what every page needs."""

    def __init__(self) -> None:
        self.environment = build_environment()

    def fragment(self, template: str, request: Request, **context: Any) -> str:
        """A part of a page (a live update): with the CSRF token of the request's session, for
        the forms in it."""
        auth = page_auth_of(request)
        csrf_token = auth.csrf_token if auth else ""
        read_only = bool(auth and auth.read_only)
        return self.environment.get_template(template).render(
            csrf_token=csrf_token, read_only=read_only, **context
        )

    def render(
        self, request: Request, template: str, *, status_code: int = 200, **context: Any
    ) -> HTMLResponse:
        auth = page_auth_of(request)
        now = datetime.now(UTC)
        context.setdefault("title", "DOMINUS")
        html = self.environment.get_template(template).render(
            request_path=request.url.path,
            csrf_token=auth.csrf_token if auth else "",
            logged_in=bool(auth and auth.session is not None),
            read_only=bool(auth and auth.read_only),
            now=now,
            ago=lambda value: age(value, now),
            **context,
        )
        headers = {"Cache-Control": "no-store"}
        if request.headers.get("hx-boosted") == "true":
            # A boosted form post lands here through its 303: the address bar should show
            # this page, not the form's (htmx pushes what this header says).
            target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            headers["HX-Push-Url"] = target
        return HTMLResponse(html, status_code=status_code, headers=headers)


def page_auth(request: Request) -> PageAuth:
    auth: PageAuth = request.state.page_auth
    return auth
