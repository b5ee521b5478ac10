"""The pipeline's rows: runs, their checkpoints, candidates, scores and weight sets.

Every write is one transaction; large writes go in batches inside it. Time comes from the
caller (`now`), as everywhere in DOMINUS.

Write transactions are opened by `begin`: the engine's own by default; a PIPELINE_RUN job's
handler passes its job context's fenced transaction (ADR 0024), so an attempt that lost its job
to a newer attempt cannot write checkpoints or results beside it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    Integer,
    Select,
    and_,
    case,
    delete,
    func,
    insert,
    select,
    update,
)

from dominus.db.dialects import JsonArrayLength, dialect_insert
from dominus.db.errors import database_errors
from dominus.errors import NotFoundError
from dominus.pipeline.model import RunInput, RunStatus, Stage
from dominus.providers.setup import SAMPLE
from dominus.schema.tables import (
    MAX_ID,
    candidates,
    pipeline_checkpoints,
    pipeline_runs,
    scoring_runs,
)

BATCH_SIZE = 500
# The lists of a run's input (RunInput's fields), counted in run listings.
INPUT_LISTS = ("keywords", "brandable", "closeout")


class RunNotFoundError(NotFoundError):
    """No pipeline run with that id."""


@dataclass(frozen=True)
class RunRecord:
    id: int
    job_id: int | None
    status: RunStatus
    # None when the run comes from `list_runs`, which reads only `input_counts`: an input can
    # be megabytes, a page of runs must not be.
    input: dict[str, Any] | None
    input_counts: dict[str, int]
    providers: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    stages: dict[str, Any]
    summary: dict[str, Any] | None
    degraded: bool
    degraded_reasons: list[str]
    error: str | None
    weight_set_id: int | None
    weights: dict[str, Any] | None

    @property
    def sample_data(self) -> bool:
        """Built from the bundled SAMPLE DATA: the `sample` providers, or a run finished before
        they had that name (it said so in its summary)."""
        return self.providers == SAMPLE or bool((self.summary or {}).get("sample_data"))

    @property
    def run_input(self) -> RunInput:
        if self.input is None:
            raise ValueError(f"run {self.id} was read without its input (a listing)")
        return RunInput.model_validate(self.input)


# (connection, run id) -> job id: enqueues the run's job inside the run's own transaction.
EnqueueInTransaction = Callable[[Connection, int], int]
# Opens a write transaction.
BeginTransaction = Callable[[], AbstractContextManager[Connection]]
# Called inside the transaction that completes a run, with the completed run (a job's handler
# completes its job there, so the run and its job are completed together or not at all).
OnRunCompleted = Callable[[Connection, "RunRecord"], None]


class PipelineStore:
    def __init__(
        self,
        engine: Engine,
        *,
        begin: BeginTransaction | None = None,
        on_completed: OnRunCompleted | None = None,
    ) -> None:
        self.engine = engine
        self._begin: BeginTransaction = begin or engine.begin
        self._on_completed = on_completed

    # --- runs ------------------------------------------------------------------------------
    def create_run(
        self,
        run_input: RunInput,
        providers: str,
        now: datetime,
        enqueue: EnqueueInTransaction | None = None,
    ) -> RunRecord:
        """Insert a pending run; with `enqueue`, its job is enqueued in the same transaction
        (both exist, or neither)."""
        with database_errors(), self._begin() as connection:
            run_id = connection.execute(
                insert(pipeline_runs)
                .values(
                    status=RunStatus.PENDING.value,
                    input=run_input.model_dump(mode="json"),
                    providers=providers,
                    created_at=now,
                    stages={},
                    degraded=False,
                    degraded_reasons=[],
                )
                .returning(pipeline_runs.c.id)
            ).scalar_one()
            if enqueue is not None:
                job_id = enqueue(connection, run_id)
                connection.execute(
                    update(pipeline_runs).where(pipeline_runs.c.id == run_id).values(job_id=job_id)
                )
            return _run_of(_one_run(connection, run_id))

    def get_run(self, run_id: int) -> RunRecord:
        with database_errors(), self.engine.connect() as connection:
            return _run_of(_one_run(connection, run_id))

    def list_runs(self, *, limit: int = 50, before_id: int | None = None) -> list[RunRecord]:
        """Newest first, without their inputs (`input` None): the database counts each list."""
        with database_errors(), self.engine.connect() as connection:
            counts = [_input_count(name).label(f"input_{name}") for name in INPUT_LISTS]
            columns = [column for column in pipeline_runs.c if column.name != "input"]
            query = select(*columns, *counts).order_by(pipeline_runs.c.id.desc()).limit(limit)
            if before_id is not None:
                query = query.where(pipeline_runs.c.id < min(before_id, MAX_ID))
            return [_run_of(row._mapping) for row in connection.execute(query)]

    def start_run(self, run_id: int, now: datetime) -> RunRecord:
        with database_errors(), self._begin() as connection:
            current = _run_of(_one_run(connection, run_id))
            connection.execute(
                update(pipeline_runs)
                .where(pipeline_runs.c.id == run_id)
                .values(
                    status=RunStatus.RUNNING.value,
                    started_at=current.started_at or now,
                    finished_at=None,
                    error=None,
                )
            )
            return _run_of(_one_run(connection, run_id))

    def set_weights(self, run_id: int, weight_set_id: int | None, weights: dict[str, Any]) -> None:
        self._update(run_id, weight_set_id=weight_set_id, weights=weights)

    def report_stage(self, run_id: int, stage: Stage, report: dict[str, Any]) -> None:
        """Record a stage's state (running, its counts) for anyone watching the run."""
        with database_errors(), self._begin() as connection:
            stages = dict(_one_run(connection, run_id)["stages"] or {})
            stages[stage.value] = report
            connection.execute(
                update(pipeline_runs).where(pipeline_runs.c.id == run_id).values(stages=stages)
            )

    def complete_stage(
        self,
        run_id: int,
        stage: Stage,
        data: dict[str, Any],
        report: dict[str, Any],
        degraded_reason: str | None,
        now: datetime,
    ) -> None:
        """Save the stage's checkpoint, its report and any degradation in one transaction."""
        with database_errors(), self._begin() as connection:
            row = _one_run(connection, run_id)
            stages = dict(row["stages"] or {})
            stages[stage.value] = report
            reasons = list(row["degraded_reasons"] or [])
            if degraded_reason is not None:
                reasons.append(degraded_reason)
            connection.execute(
                delete(pipeline_checkpoints).where(
                    pipeline_checkpoints.c.run_id == run_id,
                    pipeline_checkpoints.c.stage == stage.value,
                )
            )
            connection.execute(
                insert(pipeline_checkpoints).values(
                    run_id=run_id, stage=stage.value, data=data, saved_at=now
                )
            )
            connection.execute(
                update(pipeline_runs)
                .where(pipeline_runs.c.id == run_id)
                .values(stages=stages, degraded=bool(reasons), degraded_reasons=reasons)
            )

    def checkpoints(
        self, run_id: int, stages: Iterable[Stage] | None = None
    ) -> dict[Stage, dict[str, Any]]:
        """The run's checkpoints (of the `stages` given: the score stage's holds every score
        document, which a reader of the others need not load)."""
        query = select(pipeline_checkpoints.c.stage, pipeline_checkpoints.c.data).where(
            pipeline_checkpoints.c.run_id == run_id
        )
        if stages is not None:
            query = query.where(pipeline_checkpoints.c.stage.in_([stage.value for stage in stages]))
        with database_errors(), self.engine.connect() as connection:
            return {Stage(row.stage): row.data for row in connection.execute(query)}

    def finish_run(
        self,
        run_id: int,
        status: RunStatus,
        now: datetime,
        *,
        summary: dict[str, Any] | None = None,
        error: str | None = None,
    ) -> None:
        values: dict[str, Any] = {"status": status.value, "finished_at": now, "error": error}
        if summary is not None:
            values["summary"] = summary
        self._update(run_id, **values)

    def return_to_pending(self, run_id: int) -> None:
        """The run's job went back to the queue: it resumes from its checkpoints."""
        self._update(run_id, status=RunStatus.PENDING.value)

    def _update(self, run_id: int, **values: Any) -> None:
        with database_errors(), self._begin() as connection:
            done = connection.execute(
                update(pipeline_runs).where(pipeline_runs.c.id == run_id).values(**values)
            )
            if done.rowcount == 0:
                raise RunNotFoundError(f"no pipeline run with id {run_id}")

    # --- candidates and scores ---------------------------------------------------------------
    def complete_run(
        self,
        run_id: int,
        candidate_rows: Sequence[dict[str, Any]],
        score_rows: Sequence[dict[str, Any]],
        summary: dict[str, Any],
        now: datetime,
    ) -> RunRecord:
        """Upsert the run's candidates, replace its scores (in batches) and mark it completed, in
        one transaction: a resumed run writes its results again without duplicates, and a run is
        never completed without its results or the reverse."""
        with database_errors(), self._begin() as connection:
            for batch in _batches(candidate_rows):
                _upsert_candidates(connection, batch, run_id, now)
            connection.execute(delete(scoring_runs).where(scoring_runs.c.run_id == run_id))
            for batch in _batches(score_rows):
                rows = [row | {"run_id": run_id, "scored_at": now} for row in batch]
                connection.execute(insert(scoring_runs), rows)
            connection.execute(
                update(pipeline_runs)
                .where(pipeline_runs.c.id == run_id)
                .values(
                    status=RunStatus.COMPLETED.value, finished_at=now, error=None, summary=summary
                )
            )
            run = _run_of(_one_run(connection, run_id))
            if self._on_completed is not None:
                self._on_completed(connection, run)
            return run

    def run_scores(
        self,
        run_id: int,
        *,
        recommended_only: bool = False,
        limit: int | None = 1000,
        offset: int = 0,
    ) -> list[dict[str, Any]]:
        """The run's scored candidates in ranking order (`ranked_scores`)."""
        query = _ranked_scores(run_id, recommended_only).limit(limit).offset(offset)
        with database_errors(), self.engine.connect() as connection:
            self._require_run(connection, run_id)
            return [dict(row._mapping) for row in connection.execute(query)]

    def iter_run_scores(
        self,
        run_id: int,
        *,
        recommended_only: bool = False,
        limit: int | None = None,
        offset: int = 0,
    ) -> Iterator[dict[str, Any]]:
        """`run_scores` read in batches from one query (an export of a large run does not hold
        every row in memory); the connection stays open until the iterator is exhausted."""
        query = _ranked_scores(run_id, recommended_only).limit(limit).offset(offset)
        with database_errors(), self.engine.connect() as connection:
            self._require_run(connection, run_id)
            result = connection.execution_options(stream_results=True).execute(query)
            for batch in result.partitions(BATCH_SIZE):
                yield from (dict(row._mapping) for row in batch)

    def count_scores(self, run_id: int, *, recommended_only: bool = False) -> int:
        query = select(func.count()).where(scoring_runs.c.run_id == run_id)
        if recommended_only:
            query = query.where(scoring_runs.c.recommended.is_(True))
        with database_errors(), self.engine.connect() as connection:
            return int(connection.execute(query).scalar_one())

    def scored_domains(self, run_id: int) -> set[str]:
        query = select(scoring_runs.c.domain).where(scoring_runs.c.run_id == run_id)
        with database_errors(), self.engine.connect() as connection:
            return set(connection.execute(query).scalars())

    @staticmethod
    def _require_run(connection: Connection, run_id: int) -> None:
        _one_run(connection, run_id)

    # --- weight sets -------------------------------------------------------------------------


def _ranked_scores(run_id: int, recommended_only: bool) -> Select[Any]:
    """Ranking order: recommended names first, by expected profit (the money gate's figure in
    the details), then the speculative, then the rejected, each by expected profit (unknown
    last), then expected value and name. The tier is read from the row's columns where it can
    be (`recommended`, the trademark verdict), so rows stored before ADR 0017 rank the same."""
    details = scoring_runs.c.details
    profit = details[("money", "expected_profit")].as_float()
    speculative = and_(
        details["tier"].as_string() == "speculative",
        scoring_runs.c.trademark_verdict == "clear",
    )
    tier_rank = case((scoring_runs.c.recommended.is_(True), 0), (speculative, 1), else_=2)
    query = (
        select(scoring_runs)
        .where(scoring_runs.c.run_id == run_id)
        .order_by(
            tier_rank,
            profit.desc().nulls_last(),
            scoring_runs.c.expected_value.desc(),
            scoring_runs.c.domain,
        )
    )
    if recommended_only:
        query = query.where(scoring_runs.c.recommended.is_(True))
    return query


def _one_run(connection: Connection, run_id: int) -> Any:
    if not 0 < run_id <= MAX_ID:  # no such row, and the driver could not even bind it
        raise RunNotFoundError(f"no pipeline run with id {run_id}")
    row = connection.execute(select(pipeline_runs).where(pipeline_runs.c.id == run_id)).first()
    if row is None:
        raise RunNotFoundError(f"no pipeline run with id {run_id}")
    return row._mapping


def _input_count(name: str) -> ColumnElement[int]:
    """The length of one list of a run's input, computed by the database (0 when absent)."""
    return func.coalesce(JsonArrayLength(pipeline_runs.c.input, name), 0, type_=Integer)


def _run_of(row: Any) -> RunRecord:
    full_input = row.get("input")
    if full_input is not None:
        counts = {name: len(full_input.get(name) or ()) for name in INPUT_LISTS}
    else:
        counts = {name: row[f"input_{name}"] for name in INPUT_LISTS}
    return RunRecord(
        id=row["id"],
        job_id=row["job_id"],
        status=RunStatus(row["status"]),
        input=full_input,
        input_counts=counts,
        providers=row["providers"],
        created_at=row["created_at"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        stages=dict(row["stages"] or {}),
        summary=row["summary"],
        degraded=bool(row["degraded"]),
        degraded_reasons=list(row["degraded_reasons"] or []),
        error=row["error"],
        weight_set_id=row["weight_set_id"],
        weights=row["weights"],
    )


def _batches(rows: Sequence[dict[str, Any]]) -> Iterable[Sequence[dict[str, Any]]]:
    for start in range(0, len(rows), BATCH_SIZE):
        yield rows[start : start + BATCH_SIZE]


def _upsert_candidates(
    connection: Connection, batch: Sequence[dict[str, Any]], run_id: int, now: datetime
) -> None:
    rows = [
        row | {"first_seen_at": now, "last_seen_at": now, "last_run_id": run_id} for row in batch
    ]
    statement = dialect_insert(connection, candidates)
    refreshed = {
        name: statement.excluded[name]
        for name in (
            "unicode_domain",
            "source",
            "availability",
            "availability_detail",
            "registered_at",
            "expires_at",
            "last_seen_at",
            "last_run_id",
        )
    }
    connection.execute(
        statement.on_conflict_do_update(index_elements=["domain"], set_=refreshed), rows
    )
