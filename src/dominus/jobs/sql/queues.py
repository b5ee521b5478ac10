"""Named queues in the database: pause, resume, and what each queue holds (ADR 0050).

The pause itself is enforced by the claim statements (each backend's), which read `job_queues`
in the same statement; this module only writes and reads the state."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, func, select, update

from dominus.jobs.model import DEFAULT_QUEUE, JobStatus, QueueState
from dominus.jobs.sql.backend import Backend
from dominus.jobs.sql.tables import job_queue, job_queues

_ACTIVE = (JobStatus.PENDING.value, JobStatus.RUNNING.value)


def paused_queues(connection: Connection) -> set[str]:
    rows = connection.execute(select(job_queues.c.name).where(job_queues.c.paused.is_(True)))
    return {row.name for row in rows}


def set_paused(
    backend: Backend, connection: Connection, name: str, paused: bool, now: datetime
) -> QueueState:
    """Pause or resume `name` (a queue need not exist before: its row is made here). Resuming
    wakes idle workers, as an enqueue does."""
    connection.execute(
        backend.insert_or_ignore(
            job_queues, {"name": name, "paused": False, "paused_at": None, "updated_at": now}
        )
    )
    changed = connection.execute(
        update(job_queues)
        .where(job_queues.c.name == name, job_queues.c.paused.is_not(paused))
        .values(paused=paused, paused_at=now if paused else None, updated_at=now)
    )
    if changed.rowcount and not paused:
        backend.notify_new_jobs(connection)
    [state] = [queue for queue in queue_states(connection) if queue.name == name]
    return state


def queue_states(connection: Connection) -> list[QueueState]:
    """Every queue that has active jobs or a state row, and `default`, by name."""
    counts: dict[str, dict[str, int]] = {DEFAULT_QUEUE: {}}
    rows = connection.execute(
        select(job_queue.c.queue, job_queue.c.status, func.count())
        .where(job_queue.c.status.in_(_ACTIVE))
        .group_by(job_queue.c.queue, job_queue.c.status)
    )
    for queue, status, count in rows:
        counts.setdefault(queue, {})[status] = count
    states = {
        row.name: row
        for row in connection.execute(
            select(job_queues.c.name, job_queues.c.paused, job_queues.c.paused_at)
        )
    }
    return [
        QueueState(
            name=name,
            paused=bool(states[name].paused) if name in states else False,
            paused_at=states[name].paused_at if name in states else None,
            pending=counts.get(name, {}).get(JobStatus.PENDING.value, 0),
            running=counts.get(name, {}).get(JobStatus.RUNNING.value, 0),
        )
        for name in sorted(set(counts) | set(states))
    ]
