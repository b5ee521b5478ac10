"""A `JobSelection` as SQL: the WHERE clauses of a listing's filter, its count and its ids
(ADR 0054). Reporting and operator paths only: nothing here is on the claim or settle paths."""

from __future__ import annotations

import json
from datetime import datetime

from sqlalchemy import ColumnElement, Connection, Text, cast, func, or_, select

from dominus.jobs.selection import JobSelection, Waiting
from dominus.jobs.sql.predicates import IS_PENDING
from dominus.jobs.sql.tables import job_queue

LIKE_ESCAPE = "\\"


def like_pattern(text: str) -> str:
    """`%text%` with LIKE's wildcards in `text` taken literally (escaped with a backslash)."""
    escaped = (text.replace(LIKE_ESCAPE, LIKE_ESCAPE * 2).replace("%", LIKE_ESCAPE + "%")).replace(
        "_", LIKE_ESCAPE + "_"
    )
    return f"%{escaped}%"


def _search(text: str) -> ColumnElement[bool]:
    """The term in the payload or the last error, in any case. The payload is searched in its
    JSON text, so the term is written as JSON writes a string's inside (a quote or a backslash
    escaped): both with non-ASCII as is (PostgreSQL's jsonb) and as \\uXXXX (SQLite's
    serialiser), so `O'Brien "Ltd"` or `café` is found on either database."""
    payload = cast(job_queue.c.payload, Text)
    forms = {json.dumps(text, ensure_ascii=ascii)[1:-1] for ascii in (True, False)}
    matches = [payload.ilike(like_pattern(form), escape=LIKE_ESCAPE) for form in sorted(forms)]
    matches.append(job_queue.c.last_error.ilike(like_pattern(text), escape=LIKE_ESCAPE))
    return or_(*matches)


def _waiting(waiting: Waiting, now: datetime) -> list[ColumnElement[bool]]:
    if waiting is Waiting.DUE:
        return [IS_PENDING, job_queue.c.run_at <= now]
    spent = job_queue.c.attempts > 0 if waiting is Waiting.RETRYING else job_queue.c.attempts == 0
    return [IS_PENDING, job_queue.c.run_at > now, spent]


def conditions(selection: JobSelection, now: datetime | None) -> list[ColumnElement[bool]]:
    """The WHERE clauses of `selection` (`now`: when `waiting` is judged)."""
    where: list[ColumnElement[bool]] = []
    if selection.status is not None:
        where.append(job_queue.c.status == selection.status.value)
    if selection.statuses:
        where.append(job_queue.c.status.in_([status.value for status in selection.statuses]))
    if selection.job_type is not None:
        where.append(job_queue.c.job_type == selection.job_type)
    if selection.waiting is not None:
        if now is None:
            raise ValueError("a waiting view needs the time it is judged at")
        where.extend(_waiting(selection.waiting, now))
    if selection.search:
        where.append(_search(selection.search))
    if selection.created_after is not None:
        where.append(job_queue.c.created_at > selection.created_after)
    if selection.created_before is not None:
        where.append(job_queue.c.created_at < selection.created_before)
    return where


def matches_nothing(selection: JobSelection) -> bool:
    """No job holds a NUL (enqueue refuses it), and PostgreSQL cannot even compare one."""
    return any("\x00" in (text or "") for text in (selection.job_type, selection.search))


def count_jobs(connection: Connection, selection: JobSelection, now: datetime | None) -> int:
    query = select(func.count()).select_from(job_queue).where(*conditions(selection, now))
    return int(connection.execute(query).scalar_one())


def job_ids(
    connection: Connection, selection: JobSelection, now: datetime | None, limit: int
) -> list[int]:
    """The ids of the first `limit` jobs of `selection`, oldest first (a capped bulk action
    takes the jobs that have waited longest)."""
    query = (
        select(job_queue.c.id)
        .where(*conditions(selection, now))
        .order_by(job_queue.c.id)
        .limit(limit)
    )
    return [row.id for row in connection.execute(query)]
