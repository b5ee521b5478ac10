"""What PRUNE deletes: one rule per kind of expired row, each spelled once as a SQLAlchemy Core
predicate, so a dry run counts exactly what a prune would delete (ADR 0020).

Every rule walks its table in primary-key order (a keyset cursor) in short steps: the ids of
the next batch are read in a read-only transaction (which never blocks a writer), then deleted
by primary key in a write transaction of their own that checks the rule again (a row that
stopped qualifying meanwhile is left alone). A step deletes at most the batch size of each table,
fewer while steps take longer than 50 ms (`StepSize`).

    rule            tables                                  kept
    dead letters    dead_letter_jobs                        failed within DLQ_RETENTION_DAYS
    jobs            job_events, job_queue                   pending and running jobs; jobs a
                                                            dead-letter entry refers to; finished
                                                            within JOB_RETENTION_DAYS
    pipeline runs   scoring_runs, pipeline_checkpoints,     runs not finished, or whose job is
                    pipeline_runs                           pending or running; finished within
                                                            PIPELINE_RUN_RETENTION_DAYS
    candidates      candidates                              a candidate a kept run saw last or
                                                            scored
    job history     job_metrics (hourly history rows only)  hours within HISTORY_KEPT (8 days)

Never pruned: the job_metrics counters (monotonic), workers, schedules (their fires are pruned by
the scheduler), weight sets. Provider caches: no provider keeps one in the database (the DNS and
RDAP answers are cached in memory for one run), so there is no rule for them. Portfolio-rescore
artefacts: see `portfolio_rescore_rules`, the extension point for the portfolio's tables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    FromClause,
    Select,
    and_,
    delete,
    false,
    func,
    not_,
    select,
    tuple_,
)

from dominus.db.engine import read_only
from dominus.db.errors import database_errors
from dominus.jobs.metrics_model import HISTORY_KEPT, HISTORY_NAMES, history_hour
from dominus.jobs.sql import history_fold
from dominus.jobs.sql.backend import backend_for
from dominus.schema.tables import (
    candidates,
    dead_letter_jobs,
    job_events,
    job_metrics,
    job_queue,
    pipeline_checkpoints,
    pipeline_runs,
    scoring_runs,
)

T = TypeVar("T")
FINISHED_JOB_STATUSES = ("completed", "cancelled", "failed")
ACTIVE_JOB_STATUSES = ("pending", "running")
FINISHED_RUN_STATUSES = ("completed", "cancelled", "failed")
# Rows deleted per table in one step, by table name.
Deleted = dict[str, int]


@dataclass(frozen=True)
class Retention:
    """Days each kind of row is kept after it finished; 0 keeps it for ever."""

    job_days: int
    dead_letter_days: int
    pipeline_run_days: int

    def document(self) -> dict[str, int]:
        return {
            "job_retention_days": self.job_days,
            "dlq_retention_days": self.dead_letter_days,
            "pipeline_run_retention_days": self.pipeline_run_days,
        }


class StepSize:
    """How many rows the next step takes: PRUNE_BATCH_SIZE at most, halved after a step that
    took longer than `target_seconds` (a slow disk, a loaded machine: the lock is held for
    less), doubled back after a quick one. Never below `MIN_STEP_ROWS` (or the maximum)."""

    def __init__(self, maximum: int, target_seconds: float = 0.05) -> None:
        self.maximum = maximum
        self.rows = maximum
        self._target = target_seconds

    def observe(self, step_seconds: float) -> None:
        if step_seconds > self._target:
            self.rows = max(min(MIN_STEP_ROWS, self.maximum), self.rows // 2)
        elif step_seconds < self._target / 4:
            self.rows = min(self.maximum, self.rows * 2)


MIN_STEP_ROWS = 50


def cutoff(now: datetime, days: int) -> datetime | None:
    """Rows older than this go; None (retention 0) keeps them all."""
    return now - timedelta(days=days) if days > 0 else None


class PruneRule(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def tables(self) -> tuple[str, ...]:
        """What it deletes from, in the order it deletes."""
        ...

    def count(self, connection: Connection) -> Deleted:
        """How many rows of each table a prune would delete now (the dry run)."""
        ...

    def batches(self, engine: Engine, size: StepSize) -> Iterator[Deleted]:
        """Delete in steps of at most `size.rows` rows per table (read at each step), one short
        write transaction per step; yields what each step deleted."""
        ...


def prune_rules(retention: Retention, now: datetime) -> list[PruneRule]:
    """The rules in the order they run (dead letters before the jobs they keep; runs before
    the candidates they orphan). A rule whose retention is 0 is left out."""
    jobs_cutoff = cutoff(now, retention.job_days)
    dead_letter_cutoff = cutoff(now, retention.dead_letter_days)
    runs_cutoff = cutoff(now, retention.pipeline_run_days)
    rules: list[PruneRule] = []
    if dead_letter_cutoff is not None:
        rules.append(DeadLetterRule(dead_letter_cutoff))
    if jobs_cutoff is not None:
        rules.append(JobRule(jobs_cutoff, dead_letter_cutoff, now))
    if runs_cutoff is not None:
        rules.append(PipelineRunRule(runs_cutoff))
        rules.append(CandidateRule(runs_cutoff))
    rules.extend(portfolio_rescore_rules(retention, now))
    rules.append(HistoryRule(now - HISTORY_KEPT))
    return rules


def portfolio_rescore_rules(_retention: Retention, _now: datetime) -> list[PruneRule]:
    """The portfolio's rescore artefacts older than their retention: none to delete (ADR 0020,
    addendum). PORTFOLIO_RESCORE writes its result on its job (pruned with the jobs, by
    JOB_RETENTION_DAYS), updates the entries in place and appends a row to the verdict history
    only when a verdict changes; that history is the investor's record of why a name was kept,
    repriced or dropped, so it is kept like the ledger's outcomes. A later artefact table adds
    its rule here (a `KeysetRule` like the dead letters'), its retention setting, a `Retention`
    field and its name in `ALL_TABLES`."""
    return []


# Every table PRUNE may delete from, in report order (a rule that is off reports 0).
ALL_TABLES = (
    "dead_letter_jobs",
    "job_events",
    "job_queue",
    "scoring_runs",
    "pipeline_checkpoints",
    "pipeline_runs",
    "candidates",
    "job_metrics",
)


# --- the predicates ---------------------------------------------------------------------------
def expired_dead_letter(dead_letter_cutoff: datetime | None, table: FromClause) -> Any:
    if dead_letter_cutoff is None:
        return false()
    return table.c.failed_at < dead_letter_cutoff


def prunable_job(
    jobs_cutoff: datetime, dead_letter_cutoff: datetime | None, *, predict: bool
) -> Any:
    """A finished job past the retention that no dead-letter entry refers to. `predict` (the
    dry run) ignores the entries the dead-letter rule is about to delete."""
    entry = dead_letter_jobs.alias("entry")
    referring = entry.c.job_id == job_queue.c.id
    if predict:
        referring = and_(referring, not_(expired_dead_letter(dead_letter_cutoff, entry)))
    return and_(
        job_queue.c.status.in_(FINISHED_JOB_STATUSES),
        func.coalesce(job_queue.c.finished_at, job_queue.c.updated_at) < jobs_cutoff,
        not_(select(entry.c.id).where(referring).exists()),
    )


def prunable_run(runs_cutoff: datetime, run: FromClause) -> ColumnElement[bool]:
    """A finished run past the retention whose job (if it still exists) is not active: a
    failed run whose job retries is resumed from its checkpoints."""
    job = job_queue.alias("run_job")
    active_job = (
        select(job.c.id)
        .where(job.c.id == run.c.job_id, job.c.status.in_(ACTIVE_JOB_STATUSES))
        .exists()
    )
    return and_(
        run.c.status.in_(FINISHED_RUN_STATUSES),
        func.coalesce(run.c.finished_at, run.c.created_at) < runs_cutoff,
        not_(active_job),
    )


def orphaned_candidate(runs_cutoff: datetime) -> ColumnElement[bool]:
    """A candidate neither last seen by nor scored in a run that is kept."""
    last_run = pipeline_runs.alias("last_run")
    scoring_run = pipeline_runs.alias("scoring_run")
    seen_by_kept_run = (
        select(last_run.c.id)
        .where(
            last_run.c.id == candidates.c.last_run_id,
            not_(prunable_run(runs_cutoff, last_run)),
        )
        .exists()
    )
    scored_in_kept_run = (
        select(scoring_runs.c.id)
        .join(scoring_run, scoring_run.c.id == scoring_runs.c.run_id)
        .where(
            scoring_runs.c.domain == candidates.c.domain,
            not_(prunable_run(runs_cutoff, scoring_run)),
        )
        .exists()
    )
    return and_(not_(seen_by_kept_run), not_(scored_in_kept_run))


# --- the steps --------------------------------------------------------------------------------
def read_step(engine: Engine, work: Callable[[Connection], T]) -> T:
    with database_errors(), read_only(engine).begin() as connection:
        return work(connection)


def write_step(engine: Engine, work: Callable[[Connection], T]) -> T:
    with database_errors(), engine.begin() as connection:
        return work(connection)


def read_ids(engine: Engine, query: Select[Any]) -> list[Any]:
    """The first column of `query`'s rows (read-only transaction)."""
    return read_step(engine, lambda connection: list(connection.execute(query).scalars()))


def read_keys(engine: Engine, query: Select[Any]) -> list[tuple[Any, ...]]:
    """`query`'s rows as tuples (read-only transaction)."""
    return read_step(engine, lambda connection: [tuple(row) for row in connection.execute(query)])


def delete_step(engine: Engine, statement: Any) -> int:
    """Run one DELETE in a write transaction of its own; the rows it deleted."""
    return write_step(engine, lambda connection: int(connection.execute(statement).rowcount))


def _count(connection: Connection, query: Select[Any]) -> int:
    return int(connection.execute(query).scalar_one())


@dataclass(frozen=True)
class DeadLetterRule:
    dead_letter_cutoff: datetime
    name: str = "dead letters"
    tables: tuple[str, ...] = ("dead_letter_jobs",)

    def _where(self) -> Any:
        return expired_dead_letter(self.dead_letter_cutoff, dead_letter_jobs)

    def count(self, connection: Connection) -> Deleted:
        query = select(func.count()).select_from(dead_letter_jobs).where(self._where())
        return {"dead_letter_jobs": _count(connection, query)}

    def batches(self, engine: Engine, size: StepSize) -> Iterator[Deleted]:
        key = dead_letter_jobs.c.id
        after = 0
        while True:
            query = select(key).where(key > after, self._where()).order_by(key).limit(size.rows)
            ids = read_ids(engine, query)
            if not ids:
                return
            after = ids[-1]
            statement = delete(dead_letter_jobs).where(key.in_(ids), self._where())
            yield {"dead_letter_jobs": delete_step(engine, statement)}


@dataclass(frozen=True)
class JobRule:
    jobs_cutoff: datetime
    dead_letter_cutoff: datetime | None
    now: datetime
    name: str = "jobs"
    tables: tuple[str, ...] = ("job_events", "job_queue")

    def count(self, connection: Connection) -> Deleted:
        where = prunable_job(self.jobs_cutoff, self.dead_letter_cutoff, predict=True)
        jobs = select(func.count()).select_from(job_queue).where(where)
        events = (
            select(func.count())
            .select_from(job_events.join(job_queue, job_events.c.job_id == job_queue.c.id))
            .where(where)
        )
        return {"job_events": _count(connection, events), "job_queue": _count(connection, jobs)}

    def batches(self, engine: Engine, size: StepSize) -> Iterator[Deleted]:
        where = prunable_job(self.jobs_cutoff, self.dead_letter_cutoff, predict=False)
        key = job_queue.c.id
        after = 0
        while True:
            query = select(key).where(key > after, where).order_by(key).limit(size.rows)
            ids = read_ids(engine, query)
            if not ids:
                return
            after = ids[-1]
            yield self._delete(engine, ids, where, self.now)

    @staticmethod
    def _delete(engine: Engine, ids: Sequence[int], where: Any, now: datetime) -> Deleted:
        # The events go with their job, in its transaction (the foreign key would cascade
        # anyway; deleting them first is what lets them be counted).
        still = select(job_queue.c.id).where(job_queue.c.id.in_(ids), where)

        backend = backend_for(engine)

        def work(connection: Connection) -> Deleted:
            # The enqueue counters, where they are counted from the rows, are brought up to
            # date before rows go and marked again after (ADR 0036).
            backend.fold_enqueues(connection)
            # The job history's first fold takes the rows' history (ADR 0060): before any
            # row goes, or a database whose workers never folded would lose it.
            history_fold.begin(backend, connection, now)
            events = connection.execute(delete(job_events).where(job_events.c.job_id.in_(still)))
            jobs = connection.execute(delete(job_queue).where(job_queue.c.id.in_(ids), where))
            backend.fold_enqueues(connection)
            return {"job_events": events.rowcount, "job_queue": jobs.rowcount}

        return write_step(engine, work)


@dataclass(frozen=True)
class PipelineRunRule:
    runs_cutoff: datetime
    name: str = "pipeline runs"
    tables: tuple[str, ...] = ("scoring_runs", "pipeline_checkpoints", "pipeline_runs")

    def count(self, connection: Connection) -> Deleted:
        where = prunable_run(self.runs_cutoff, pipeline_runs)
        runs = select(func.count()).select_from(pipeline_runs).where(where)
        scores = select(func.count()).select_from(scoring_runs.join(pipeline_runs)).where(where)
        checkpoints = (
            select(func.count()).select_from(pipeline_checkpoints.join(pipeline_runs)).where(where)
        )
        return {
            "scoring_runs": _count(connection, scores),
            "pipeline_checkpoints": _count(connection, checkpoints),
            "pipeline_runs": _count(connection, runs),
        }

    def batches(self, engine: Engine, size: StepSize) -> Iterator[Deleted]:
        where = prunable_run(self.runs_cutoff, pipeline_runs)
        key = pipeline_runs.c.id
        after = 0
        while True:
            query = select(key).where(key > after, where).order_by(key).limit(size.rows)
            runs = read_ids(engine, query)
            if not runs:
                return
            after = runs[-1]
            # A run's children go first, in steps, each checking that the run still qualifies;
            # the run row last, so an interrupted prune is finished by the next one.
            still = select(key).where(key.in_(runs), where)
            yield from self._children(engine, runs, still, size)
            statement = delete(pipeline_runs).where(key.in_(runs), where)
            yield {"pipeline_runs": delete_step(engine, statement)}

    @staticmethod
    def _children(
        engine: Engine, runs: list[int], still: Select[Any], size: StepSize
    ) -> Iterator[Deleted]:
        score_key = scoring_runs.c.id
        scores = select(score_key).where(scoring_runs.c.run_id.in_(runs)).order_by(score_key)
        while ids := read_ids(engine, scores.limit(size.rows)):
            deleted = delete_step(
                engine,
                delete(scoring_runs).where(score_key.in_(ids), scoring_runs.c.run_id.in_(still)),
            )
            yield {"scoring_runs": deleted}
            if deleted == 0:
                return  # the run stopped qualifying
        checkpoint_key = tuple_(pipeline_checkpoints.c.run_id, pipeline_checkpoints.c.stage)
        checkpoints = (
            select(pipeline_checkpoints.c.run_id, pipeline_checkpoints.c.stage)
            .where(pipeline_checkpoints.c.run_id.in_(runs))
            .order_by(pipeline_checkpoints.c.run_id, pipeline_checkpoints.c.stage)
        )
        while keys := read_keys(engine, checkpoints.limit(size.rows)):
            deleted = delete_step(
                engine,
                delete(pipeline_checkpoints).where(
                    checkpoint_key.in_(keys), pipeline_checkpoints.c.run_id.in_(still)
                ),
            )
            yield {"pipeline_checkpoints": deleted}
            if deleted == 0:
                return


@dataclass(frozen=True)
class CandidateRule:
    runs_cutoff: datetime
    name: str = "candidates"
    tables: tuple[str, ...] = ("candidates",)

    def count(self, connection: Connection) -> Deleted:
        query = (
            select(func.count()).select_from(candidates).where(orphaned_candidate(self.runs_cutoff))
        )
        return {"candidates": _count(connection, query)}

    def batches(self, engine: Engine, size: StepSize) -> Iterator[Deleted]:
        where = orphaned_candidate(self.runs_cutoff)
        key = candidates.c.id
        after = 0
        while True:
            query = select(key).where(key > after, where).order_by(key).limit(size.rows)
            ids = read_ids(engine, query)
            if not ids:
                return
            after = ids[-1]
            statement = delete(candidates).where(key.in_(ids), where)
            yield {"candidates": delete_step(engine, statement)}


@dataclass(frozen=True)
class HistoryRule:
    """The job history's hours older than HISTORY_KEPT (the History page shows 7 days). The
    counters' totals leave those rows out, so deleting them changes no total."""

    history_cutoff: datetime
    name: str = "job history"
    tables: tuple[str, ...] = ("job_metrics",)

    def _where(self) -> ColumnElement[bool]:
        return and_(
            job_metrics.c.name.in_(HISTORY_NAMES),
            job_metrics.c.bucket < history_hour(self.history_cutoff),
        )

    def count(self, connection: Connection) -> Deleted:
        query = select(func.count()).select_from(job_metrics).where(self._where())
        return {"job_metrics": _count(connection, query)}

    def batches(self, engine: Engine, size: StepSize) -> Iterator[Deleted]:
        columns = (job_metrics.c.name, job_metrics.c.job_type, job_metrics.c.bucket)
        key = tuple_(*columns, job_metrics.c.shard)
        while True:
            # A row that qualifies qualifies for ever (its hour only gets older), so each step
            # deletes what it read and the next reads from the start again.
            query = select(*columns, job_metrics.c.shard).where(self._where()).limit(size.rows)
            keys = read_keys(engine, query)
            if not keys:
                return
            statement = delete(job_metrics).where(key.in_(keys), self._where())
            yield {"job_metrics": delete_step(engine, statement)}
