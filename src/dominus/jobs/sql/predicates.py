"""State predicates written with literal values, so SQLite can match its partial indexes
(a bound parameter would not prove `status = 'pending'` to the planner)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, literal_column

from dominus.jobs.model import Claim
from dominus.jobs.sql.tables import job_queue

IS_PENDING = job_queue.c.status == literal_column("'pending'")
IS_RUNNING = job_queue.c.status == literal_column("'running'")


def fenced(claim: Claim) -> Any:
    """The WHERE clause that makes a write conditional on the claim still holding."""
    return and_(
        job_queue.c.id == claim.job_id,
        job_queue.c.locked_by == claim.worker_id,
        job_queue.c.attempts == claim.attempt,
        IS_RUNNING,
    )
