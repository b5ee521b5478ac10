"""`dominus enqueue`: add one job, or one job per line of a JSON-lines file."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import typer
from sqlalchemy import Engine

from dominus.cli.output import console, errors, print_json, print_model
from dominus.cli.runtime import open_runtime
from dominus.db.errors import database_errors
from dominus.errors import InvalidJobOptionError, InvalidPayloadError
from dominus.jobs.client import EnqueueRequest
from dominus.jobs.concurrency import check_concurrency_key, parse_concurrency_limit
from dominus.jobs.documents import EnqueuedJobOut
from dominus.jobs.json_limits import MAX_PAYLOAD_BYTES, loads_limited
from dominus.jobs.model import NewJob
from dominus.jobs.queues import check_queue_name
from dominus.jobs.rate_limit import check_rate_key
from dominus.jobs.store import JobStore

FILE_BATCH_SIZE = 1000


def enqueue(
    job_type: str = typer.Argument(..., help="The job type, e.g. diag.noop."),
    payload: str | None = typer.Option(None, "--payload", help="The payload as a JSON object."),
    from_file: Path | None = typer.Option(
        None, "--from-file", help="A JSON-lines file: one payload object per line, one job each."
    ),
    priority: int | None = typer.Option(None, "--priority", help="Higher runs first."),
    max_attempts: int | None = typer.Option(None, "--max-attempts", help="Runs before the DLQ."),
    run_at: str | None = typer.Option(
        None, "--run-at", help="Not before this ISO 8601 time (with a UTC offset)."
    ),
    dedupe_key: str | None = typer.Option(
        None, "--dedupe-key", help="Return the active job with this key instead of a new one."
    ),
    timeout: float | None = typer.Option(None, "--timeout", help="Seconds before it is aborted."),
    queue_name: str | None = typer.Option(
        None, "--queue", help="The named queue (default: the job type's, usually `default`)."
    ),
    concurrency_key: str | None = typer.Option(
        None,
        "--concurrency-key",
        help="At most --concurrency-limit jobs with this key run at once, on every worker.",
    ),
    concurrency_limit_text: str | None = typer.Option(
        None,
        "--concurrency-limit",
        help="The key's limit (default: CONCURRENCY_LIMITS' longest matching prefix, else 1).",
    ),
    rate_key: str | None = typer.Option(
        None,
        "--rate-key",
        help="Each run takes a token from this RATE_LIMITS key first, or waits for one.",
    ),
    diagnostic_jobs: bool = typer.Option(
        False, "--diagnostic-jobs", help="Accept the diag.* job types [DOMINUS_DIAGNOSTIC_JOBS]."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the job as JSON."),
) -> None:
    """Enqueue a job and print its id (or the job, with --json)."""
    if payload is not None and from_file is not None:
        raise InvalidPayloadError("give either --payload or --from-file, not both")
    if from_file is not None and dedupe_key is not None:
        raise InvalidJobOptionError(
            "--dedupe-key applies to one job; it cannot go with --from-file"
        )
    if queue_name is not None:
        check_queue_name(queue_name, "--queue: ")
    if concurrency_key is not None:
        check_concurrency_key(concurrency_key, "--concurrency-key: ")
    concurrency_limit = parse_concurrency_limit(concurrency_limit_text, "--concurrency-limit: ")
    if rate_key is not None:
        check_rate_key(rate_key, "--rate-key: ")
    runtime = open_runtime()
    queue = runtime.queue(runtime.registry(diagnostic_jobs=diagnostic_jobs))
    template = EnqueueRequest(
        job_type=job_type,
        priority=priority,
        max_attempts=max_attempts,
        run_at=_parse_time(run_at),
        dedupe_key=dedupe_key,
        timeout_seconds=timeout,
        queue=queue_name,
        concurrency_key=concurrency_key,
        concurrency_limit=concurrency_limit,
        rate_key=rate_key,
    )
    if from_file is not None:
        now = queue.clock()
        # Each line read, parsed and checked in turn: the error names the first bad line,
        # whether it is not JSON or a payload its job type refuses.
        jobs = [
            queue.build(_replace_payload(template, item), now, f"line {number}: ")
            for number, item in _payloads(from_file)
        ]
        created = _insert_in_batches(runtime.store, runtime.engine, jobs, now, queue.max_depth)
        if as_json:
            print_json({"enqueued": created, "deduplicated": len(jobs) - created})
        else:
            console.print(created)
        return
    result = queue.enqueue_jobs([_replace_payload(template, _parse_payload(payload))])[0]
    if as_json:
        print_model(EnqueuedJobOut.enqueued(queue.get(result.job_id), result.created))
    else:
        console.print(result.job_id)
        if not result.created:
            errors.print(f"an active job with dedupe key {dedupe_key!r} exists: {result.job_id}")


def _replace_payload(template: EnqueueRequest, payload: dict[str, Any]) -> EnqueueRequest:
    return replace(template, payload=payload)


def _parse_payload(text: str | None, where: str = "--payload") -> dict[str, Any]:
    if text is None:
        return {}
    value = loads_limited(text, where)
    if not isinstance(value, dict):
        raise InvalidPayloadError(f"{where} must be a JSON object, got {type(value).__name__}")
    return value


def _parse_time(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidJobOptionError(f"--run-at is not an ISO 8601 time: {text!r}") from None
    if value.tzinfo is None:
        raise InvalidJobOptionError(f"--run-at needs a UTC offset (e.g. {text}Z): {text!r}")
    return value


def _payloads(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each non-blank line's payload, in order. Lines are read one at a time (at most a
    payload's size plus its line break), decoded one at a time, so an error names its line."""
    try:
        with path.open("rb") as file:
            raw_lines = iter(lambda: file.readline(MAX_PAYLOAD_BYTES + 2), b"")
            for number, raw in enumerate(raw_lines, start=1):
                where = f"{path} line {number}"
                if len(raw.rstrip(b"\r\n")) > MAX_PAYLOAD_BYTES:  # the read stopped mid-line
                    raise InvalidPayloadError(
                        f"{where} is over the limit of {MAX_PAYLOAD_BYTES:,} bytes for a payload"
                    )
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as error:
                    raise InvalidPayloadError(
                        f"{where} is not UTF-8 text ({error.reason})"
                    ) from None
                if line.strip():
                    yield number, _parse_payload(line, where)
    except OSError as error:
        raise InvalidPayloadError(f"cannot read {path}: {error.strerror}") from None


def _insert_in_batches(
    store: JobStore, engine: Engine, jobs: list[NewJob], now: datetime, max_depth: int
) -> int:
    """All lines in one transaction (all or nothing), written in batches with progress."""
    created = 0
    show_progress = len(jobs) > FILE_BATCH_SIZE
    with database_errors(), engine.begin() as connection:  # the commit can fail too (disk full)
        for start in range(0, len(jobs), FILE_BATCH_SIZE):
            chunk = jobs[start : start + FILE_BATCH_SIZE]
            results = store.enqueue(chunk, now, max_depth=max_depth, connection=connection)
            created += sum(1 for result in results if result.created)
            if show_progress:
                errors.print(f"enqueued {start + len(chunk)}/{len(jobs)}", end="\r")
    if show_progress:
        errors.print()
    return created
