"""What the page routes share: reading a posted form, answering an action (303 back to a page,
the POST/redirect/GET pattern, so a reload never repeats it), and the notices those pages show.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlencode

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse

from dominus.schema.tables import MAX_ID

# The words for `?notice=` codes: pages never echo text from the query string.
NOTICES = {
    "cancel-requested": "Cancel requested: the job's worker stops it at its next check.",
    "cancelled": "The job was cancelled.",
    "retried": "The job is pending again.",
    "requeued": "Requeued: the job is pending again.",
    "requeued-many": "The selected entries were requeued.",
    "nothing-selected": "Nothing was selected.",
    "purged": "The dead-letter entries were deleted.",
    "deleted-many": "The selected dead-letter entries were deleted; their jobs stay failed.",
    "schedule-run": "The schedule's job was enqueued.",
    "schedule-already": "The schedule already has a pending or running job.",
    "enabled": "The schedule is enabled.",
    "disabled": "The schedule is disabled.",
    "queue-paused": "The queue is paused: no worker claims its jobs; running ones finish.",
    "queue-resumed": "The queue is resumed: its due jobs are claimed again.",
    "key-resumed": "The key is resumed: every process may use it again.",
    "run-started": "The run was started.",
    "logged-out": "You are logged out.",
    "alert-acknowledged": "The alert was acknowledged.",
    "alerts-acknowledged": "Every open alert was acknowledged.",
    "no-open-alert": "No alert was open: nothing to acknowledge.",
    "watch-added": "The domain is on the watchlist: the next poll checks it.",
    "watch-removed": "The domain is no longer watched.",
    "rescore-queued": "A rescore was enqueued: each name is appraised again, then its verdict "
    "refreshed.",
    "rescore-pending": "A rescore was already pending or running: that job does it.",
    "imported": "The file was imported, and a rescore of the portfolio was enqueued.",
    "imported-unchanged": "The file was imported: it changed nothing, so no rescore was enqueued.",
    "sold": "The sale was recorded and the name closed as sold.",
    "dropped": "The drop was recorded and the name closed as dropped.",
}


async def form_fields(request: Request) -> dict[str, list[str]]:
    """A url-encoded form's fields (each a list: checkboxes repeat a name)."""
    body = await request.body()
    return parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)


def first(fields: dict[str, list[str]], name: str, default: str = "") -> str:
    values = fields.get(name)
    return values[0] if values else default


def row_id(text: str, what: str) -> int:
    """A row's id posted in a form: ASCII digits naming a number from 1 to the largest id a
    row can have, else a 400 page. `str.isdigit` alone would pass `²` (which `int` refuses)
    and numbers of any length (past 4,300 digits `int` refuses them too, and past BIGINT no
    driver can bind them)."""
    if not (text.isascii() and text.isdigit() and len(text) <= len(str(MAX_ID))):
        raise HTTPException(400, f"{what} {text[:40]!r} is not a number from 1 to {MAX_ID}")
    value = int(text)
    if not 0 < value <= MAX_ID:
        raise HTTPException(400, f"{what} {text[:40]!r} is not a number from 1 to {MAX_ID}")
    return value


def see_other(path: str, notice: str | None = None, job: int | None = None) -> RedirectResponse:
    """303 to `path`, with a notice code and the job the action enqueued (the page links it)."""
    query = {} if notice is None else {"notice": notice}
    if job is not None:
        query["job"] = str(job)
    target = f"{path}?{urlencode(query)}" if query else path
    return RedirectResponse(target, status_code=303)


def notice_text(request: Request) -> str | None:
    return NOTICES.get(request.query_params.get("notice", ""))


def notice_job(request: Request) -> int | None:
    """The `?job=` an action's notice links to; anything but a row's id is ignored (the
    address is only a way back to the page, never an input to act on)."""
    text = request.query_params.get("job", "")
    if not (text.isascii() and text.isdigit() and len(text) <= len(str(MAX_ID))):
        return None
    value = int(text)
    return value if 0 < value <= MAX_ID else None


def bulk_notice(request: Request) -> str | None:
    """The words for a bulk action's outcome (`?notice=bulk&action=retry&done=37&skipped=2`):
    built from the action's own name and two counts, never from text in the query."""
    query = request.query_params
    if query.get("notice") != "bulk":
        return None
    action = BULK_DONE.get(query.get("action", ""))
    done, skipped = _count(query.get("done", "")), _count(query.get("skipped", ""))
    if action is None or done is None or skipped is None:
        return None
    text = f"{done:,} job{'' if done == 1 else 's'} {action}."
    if skipped:
        text += (
            f" {skipped:,} {'was' if skipped == 1 else 'were'} left as they were: their state "
            "had changed since the confirmation."
        )
    return text


BULK_DONE = {"retry": "retried", "cancel": "cancelled or asked to stop", "delete": "deleted"}


def _count(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else None
