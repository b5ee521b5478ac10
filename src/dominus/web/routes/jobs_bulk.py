"""POST /jobs/bulk: retry, cancel or delete the jobs ticked on the Jobs page (or every job of
its filter, `?scope=filter`), after a page that says how many ("Retry 37 jobs?") and which
it leaves and why (ADR 0054). The confirmation carries the ids it counted, so exactly those
are acted on: a job whose state changed meanwhile is left, and the notice says so."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.responses import RedirectResponse, Response

from dominus.api.services import ApiServices, Services
from dominus.jobs.bulk_plan import BulkPlan, plan_ids, plan_selection
from dominus.jobs.selection import BULK_CAP, BulkAction
from dominus.web.context import Dashboard, Web
from dominus.web.routes.forms import first, form_fields, row_id
from dominus.web.routes.job_filters import JobListFilter

router = APIRouter()
REASONS_SHOWN = 20
_ACTIONS = {action.value: action for action in BulkAction}
FILTER_FIELDS = ("status", "type", "since", "q")


@router.post("/jobs/bulk")
async def bulk(request: Request, api: Services, web: Web) -> Response:
    fields = await form_fields(request)
    action = _ACTIONS.get(first(fields, "action"))
    if action is None:
        raise HTTPException(422, "action: one of retry, cancel, delete")
    listed = JobListFilter.read({name: first(fields, name) for name in FILTER_FIELDS})
    if first(fields, "confirm") == "yes":
        ids = _confirmed_ids(first(fields, "ids"))
        return await run_in_threadpool(lambda: _act(api, action, ids, listed))
    if request.query_params.get("scope") == "filter":

        def over_the_filter() -> Response:
            now = api.now()
            plan = plan_selection(api.store, action, listed.selection(now), now)
            return _confirm(request, web, plan, listed, "filter")

        return await run_in_threadpool(over_the_filter)
    ids = sorted({row_id(value, "job") for value in fields.get("job", [])})
    if not ids:
        query = urlencode({**listed.fields(), "notice": "nothing-selected"})
        return RedirectResponse(f"/jobs?{query}", status_code=303)
    if len(ids) > BULK_CAP:
        raise HTTPException(422, f"at most {BULK_CAP:,} jobs in one action, not {len(ids):,}")
    return await run_in_threadpool(
        lambda: _confirm(request, web, plan_ids(api.store, action, ids), listed, "selected")
    )


def _confirmed_ids(text: str) -> list[int]:
    values = [value for value in text.split(",") if value]
    if not 0 < len(values) <= BULK_CAP:
        raise HTTPException(422, f"ids: 1 to {BULK_CAP:,} job ids")
    return sorted({row_id(value, "job") for value in values})


def _confirm(
    request: Request, web: Dashboard, plan: BulkPlan, listed: JobListFilter, scope: str
) -> Response:
    """The confirmation page; a 409 when the action takes none of the jobs named."""
    refused = sorted(plan.refused.items())
    status = 409 if not plan.ids and (refused or plan.excluded) else 200
    return web.pages.render(
        request,
        "jobs_bulk.html",
        status_code=status,
        title=f"{plan.action.value.capitalize()} jobs?",
        plan=plan,
        action=plan.action.value,
        listed=listed,
        scope=scope,
        ids=",".join(str(job_id) for job_id in plan.ids),
        refused=refused[:REASONS_SHOWN],
        refused_more=max(0, len(refused) - REASONS_SHOWN),
        applies_to=" or ".join(state.value for state in plan.action.applies_to),
        bulk_cap=BULK_CAP,
    )


def _act(
    api: ApiServices, action: BulkAction, ids: list[int], listed: JobListFilter
) -> RedirectResponse:
    # The ids are checked again: a job that changed state since the confirmation (a retried
    # job that ran, a pending one a worker claimed before a delete) is left, not forced.
    plan = plan_ids(api.store, action, ids)
    outcome = api.queue.bulk(action, plan.ids) if plan.ids else None
    done = len(outcome.done) if outcome else 0
    query = {
        **listed.fields(),
        "notice": "bulk",
        "action": action.value,
        "done": str(done),
        "skipped": str(len(ids) - done),
    }
    return RedirectResponse(f"/jobs?{urlencode(query)}", status_code=303)
