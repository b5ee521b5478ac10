"""Rows for the prune tests, written straight into the tables with chosen timestamps."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Engine, func, insert, select

from dominus.jobs.clock import utc_now
from dominus.jobs.metrics_model import HISTORY_COMPLETED, HISTORY_KEPT, history_hour
from dominus.schema.tables import (
    candidates,
    dead_letter_jobs,
    job_events,
    job_metrics,
    job_queue,
    pipeline_checkpoints,
    pipeline_runs,
    schedules,
    scoring_runs,
)

TABLES = (
    dead_letter_jobs,
    job_events,
    job_queue,
    scoring_runs,
    pipeline_checkpoints,
    pipeline_runs,
    candidates,
    job_metrics,
)


def add_job(
    connection: Connection,
    now: datetime,
    status: str,
    *,
    age_days: float,
    events: int = 0,
    dead_letter_age_days: float | None = None,
) -> int:
    """A job that finished (or was created, if not finished) `age_days` ago."""
    when = now - timedelta(days=age_days)
    finished = when if status in ("completed", "cancelled", "failed") else None
    job_id = connection.execute(
        insert(job_queue)
        .values(
            job_type="seeded.job",  # no worker runs it: the seeded states stay
            payload={},
            status=status,
            attempts=1,
            run_at=when,
            created_at=when,
            updated_at=when,
            started_at=when if status != "pending" else None,
            finished_at=finished,
            heartbeat_at=when if status == "running" else None,
            locked_by="host:1:abc" if status == "running" else None,
        )
        .returning(job_queue.c.id)
    ).scalar_one()
    for number in range(events):
        connection.execute(
            insert(job_events).values(job_id=job_id, kind="failed", at=when, attempt=number + 1)
        )
    if dead_letter_age_days is not None:
        connection.execute(
            insert(dead_letter_jobs).values(
                job_id=job_id,
                job_type="seeded.job",
                payload={},
                attempts=1,
                errors=[],
                failed_at=now - timedelta(days=dead_letter_age_days),
            )
        )
    return int(job_id)


def add_run(
    connection: Connection,
    now: datetime,
    status: str,
    *,
    age_days: float,
    job_id: int | None = None,
    scored: tuple[str, ...] = (),
    checkpoints: tuple[str, ...] = (),
) -> int:
    when = now - timedelta(days=age_days)
    finished = when if status in ("completed", "cancelled", "failed") else None
    run_id = connection.execute(
        insert(pipeline_runs)
        .values(
            job_id=job_id,
            status=status,
            input={},
            providers="sample",
            created_at=when,
            finished_at=finished,
            stages={},
            degraded_reasons=[],
        )
        .returning(pipeline_runs.c.id)
    ).scalar_one()
    for domain in scored:
        connection.execute(
            insert(scoring_runs).values(
                run_id=run_id,
                domain=domain,
                intrinsic=0.5,
                weighted_score=0.5,
                confidence=0.5,
                expected_value=10.0,
                suggested_buy_max=5.0,
                suggested_list_price=20.0,
                recommended=False,
                trademark_verdict="clear",
                details={},
                scored_at=when,
            )
        )
    for stage in checkpoints:
        connection.execute(
            insert(pipeline_checkpoints).values(run_id=run_id, stage=stage, data={}, saved_at=when)
        )
    return int(run_id)


def add_candidate(connection: Connection, now: datetime, domain: str, last_run_id: int) -> None:
    connection.execute(
        insert(candidates).values(
            domain=domain,
            unicode_domain=domain,
            source="keyword",
            first_seen_at=now,
            last_seen_at=now,
            last_run_id=last_run_id,
        )
    )


@dataclass
class Seeded:
    kept_jobs: dict[str, int] = field(default_factory=dict)
    pruned_jobs: dict[str, int] = field(default_factory=dict)
    kept_runs: list[int] = field(default_factory=list)
    pruned_runs: list[int] = field(default_factory=list)


# What `seed` leaves to a prune with the default retention (7, 30, 180 days).
EXPECTED_COUNTS = {
    "dead_letter_jobs": 1,
    "job_events": 4,
    "job_queue": 4,
    "scoring_runs": 3,
    "pipeline_checkpoints": 2,
    "pipeline_runs": 1,
    "candidates": 2,
    "job_metrics": 1,  # the job history's hour older than HISTORY_KEPT
}


def seed(engine: Engine, now: datetime) -> Seeded:
    """Jobs, dead letters, runs and candidates on both sides of the default retentions."""
    seeded = Seeded()
    with engine.begin() as connection:
        kept, pruned = seeded.kept_jobs, seeded.pruned_jobs
        pruned["completed 10 days ago"] = add_job(
            connection, now, "completed", age_days=10, events=2
        )
        pruned["cancelled 8 days ago"] = add_job(connection, now, "cancelled", age_days=8, events=1)
        kept["completed 3 days ago"] = add_job(connection, now, "completed", age_days=3, events=1)
        kept["pending since 100 days"] = add_job(connection, now, "pending", age_days=100)
        kept["running since 100 days"] = add_job(connection, now, "running", age_days=100)
        kept["failed, dead letter 20 days old"] = add_job(
            connection, now, "failed", age_days=20, events=1, dead_letter_age_days=20
        )
        pruned["failed, dead letter 40 days old"] = add_job(
            connection, now, "failed", age_days=40, events=1, dead_letter_age_days=40
        )
        kept["completed 50 days ago, a dead letter refers to it"] = add_job(
            connection, now, "completed", age_days=50, dead_letter_age_days=10
        )
        pruned["failed 10 days ago, dead letter purged"] = add_job(
            connection, now, "failed", age_days=10
        )

        old = add_run(
            connection,
            now,
            "completed",
            age_days=200,
            scored=("alpha.com", "beta.com", "gamma.com"),
            checkpoints=("generate", "dns"),
        )
        recent = add_run(
            connection, now, "completed", age_days=100, scored=("beta.com",), checkpoints=("dns",)
        )
        retrying = add_run(
            connection,
            now,
            "failed",
            age_days=200,
            job_id=kept["pending since 100 days"],
            scored=("delta.com",),
        )
        running = add_run(connection, now, "running", age_days=300)
        seeded.pruned_runs.append(old)
        seeded.kept_runs.extend([recent, retrying, running])
        add_candidate(connection, now, "alpha.com", old)  # scored only in the old run: goes
        add_candidate(connection, now, "beta.com", old)  # scored in a kept run too: stays
        add_candidate(connection, now, "epsilon.com", recent)
        add_candidate(connection, now, "zeta.com", 999_999)  # its run is long gone: goes
        add_candidate(connection, now, "delta.com", retrying)

        connection.execute(
            insert(job_metrics).values(
                name="jobs_completed_total",
                job_type="seeded.job",
                bucket="",
                shard=0,
                value=42,
            )
        )
        for age in (HISTORY_KEPT + timedelta(hours=1), HISTORY_KEPT - timedelta(hours=1)):
            connection.execute(
                insert(job_metrics).values(
                    name=HISTORY_COMPLETED,
                    job_type="seeded.job",
                    bucket=history_hour(now - age),
                    shard=0,
                    value=3,
                )
            )
    return seeded


def table_counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as connection:
        return {
            table.name: int(
                connection.execute(select(func.count()).select_from(table)).scalar_one()
            )
            for table in TABLES
        }


def column(engine: Engine, query: Any) -> list[Any]:
    with engine.connect() as connection:
        return sorted(connection.execute(query).scalars())


def seed_run_and_schedule(engine: Engine) -> tuple[int, int]:
    """A job finished 10 days ago (PRUNE deletes it), a run finished a day ago (kept) whose
    job it is, and the backup schedule whose last job it was. (run id, job id)"""
    now = utc_now()
    with engine.begin() as connection:
        job_id = add_job(connection, now, "completed", age_days=10)
        run_id = add_run(connection, now, "completed", age_days=1, job_id=job_id)
        connection.execute(
            insert(schedules).values(
                name="backup",
                cron="0 4 * * *",
                timezone="UTC",
                job_type="BACKUP",
                payload={},
                enabled=True,
                next_fire_at=now + timedelta(hours=1),
                last_fire_at=now - timedelta(days=10),
                last_job_id=job_id,
                created_at=now,
                updated_at=now,
            )
        )
    return run_id, job_id
