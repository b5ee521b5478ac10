"""The stable JSON shapes of jobs, dead-letter entries and queue stats, shared by the CLI's
`--json` output and the HTTP API. Keys may be added; existing keys keep their meaning.
Timestamps are ISO 8601 strings with a UTC offset."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from dominus.jobs.model import DeadLetterEntry, Job, JobEvent, QueueStats, WorkerInfo


def timestamp(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def job_document(job: Job, events: Sequence[JobEvent] | None = None) -> dict[str, Any]:
    document: dict[str, Any] = {
        "id": job.id,
        "type": job.job_type,
        "status": job.status.value,
        "priority": job.priority,
        "attempts": job.attempts,
        "max_attempts": job.max_attempts,
        "failure_count": job.failure_count,
        "payload": job.payload,
        "result": job.result,
        "last_error": job.last_error,
        "progress": job.progress,
        "dedupe_key": job.dedupe_key,
        "timeout_seconds": job.timeout_seconds,
        "created_at": timestamp(job.created_at),
        "updated_at": timestamp(job.updated_at),
        "run_at": timestamp(job.run_at),
        "started_at": timestamp(job.started_at),
        "finished_at": timestamp(job.finished_at),
        "heartbeat_at": timestamp(job.heartbeat_at),
        "cancel_requested_at": timestamp(job.cancel_requested_at),
        "locked_by": job.locked_by,
    }
    if events is not None:
        document["events"] = [event_document(event) for event in events]
    return document


def event_document(event: JobEvent) -> dict[str, Any]:
    return {
        "id": event.id,
        "kind": event.kind.value,
        "at": timestamp(event.at),
        "attempt": event.attempt,
        "worker_id": event.worker_id,
        "message": event.message,
        "details": event.details,
    }


def dead_letter_document(entry: DeadLetterEntry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "job_id": entry.job_id,
        "job_type": entry.job_type,
        "payload": entry.payload,
        "attempts": entry.attempts,
        "last_error": entry.last_error,
        "errors": [
            {
                "attempt": error.attempt,
                "message": error.message,
                "traceback": error.traceback,
                "at": timestamp(error.at),
            }
            for error in entry.errors
        ],
        "failed_at": timestamp(entry.failed_at),
        "requeued_at": timestamp(entry.requeued_at),
    }


def worker_document(worker: WorkerInfo) -> dict[str, Any]:
    return {
        "id": worker.id,
        "hostname": worker.hostname,
        "pid": worker.pid,
        "concurrency": worker.concurrency,
        "job_types": worker.job_types,
        "started_at": timestamp(worker.started_at),
        "last_seen_at": timestamp(worker.last_seen_at),
        "stopped_at": timestamp(worker.stopped_at),
    }


def stats_document(stats: QueueStats) -> dict[str, Any]:
    return {
        "by_status": stats.by_status,
        "by_type": stats.by_type,
        "dead_letter": stats.dead_letter,
        "oldest_pending_age_seconds": stats.oldest_pending_age_seconds,
        "workers_alive": stats.workers_alive,
    }
