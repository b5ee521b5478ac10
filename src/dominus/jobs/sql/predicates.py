"""State predicates written with literal values, so SQLite can match its partial indexes
(a bound parameter would not prove `status = 'pending'` to the planner)."""

from __future__ import annotations

from sqlalchemy import literal_column

from dominus.db.schema import job_queue

IS_PENDING = job_queue.c.status == literal_column("'pending'")
IS_RUNNING = job_queue.c.status == literal_column("'running'")
