"""`dominus demo`: enqueue a batch of diagnostic jobs and run a worker until they are done."""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from dominus.cli.output import console, errors
from dominus.cli.runtime import open_runtime
from dominus.jobs.client import EnqueueRequest
from dominus.jobs.model import Job
from dominus.jobs.store import JobStore
from dominus.jobs.worker import Worker


def _demo_requests(noop_jobs: int) -> list[EnqueueRequest]:
    return [
        *(EnqueueRequest("diag.noop") for _ in range(noop_jobs)),
        *(EnqueueRequest("diag.sleep", {"seconds": 0.3}) for _ in range(4)),
        # Fails once, succeeds on its second attempt after the retry backoff.
        *(EnqueueRequest("diag.fail", {"fail_times": 1, "message": "flaky"}) for _ in range(3)),
        # Fails every time: ends failed, with a dead-letter entry holding both errors.
        EnqueueRequest("diag.fail", {"fail_times": 99, "message": "always broken"}, max_attempts=2),
    ]


def demo(
    noop_jobs: int = typer.Option(500, "--jobs", min=0, max=1_000_000, help="diag.noop jobs."),
) -> None:
    """Enqueue diagnostic jobs (no-ops, sleeps, flaky and broken jobs) on the configured
    database and run one worker until every one has finished; then print what happened."""
    runtime = open_runtime()
    registry = runtime.registry(diagnostic_jobs=True)
    queue = runtime.queue(registry)
    requests = _demo_requests(noop_jobs)
    started = time.monotonic()
    ids = [result.job_id for result in queue.enqueue_jobs(requests)]
    console.print(
        f"enqueued {len(ids)} diagnostic jobs (ids {min(ids)}–{max(ids)}) in "
        f"{runtime.engine.url.render_as_string(hide_password=True)}"
    )
    # One line per job would bury the summary; failures and dead letters still show.
    logging.getLogger("dominus.worker").setLevel(logging.WARNING)
    config = runtime.worker_config(burst=True)
    worker = Worker(
        runtime.store,
        registry,
        config,
        clock=runtime.clock,
        watcher=runtime.change_watcher(),
        limiters=runtime.limiters,
    )
    queue.subscribe(worker.wake)
    thread = threading.Thread(target=worker.run, name="dominus-demo-worker", daemon=True)
    thread.start()
    try:
        _show_progress(runtime.store, ids, thread)
    except KeyboardInterrupt:
        errors.print("interrupted: stopping the worker gracefully")
        worker.request_shutdown()
        thread.join()
        raise typer.Exit(130) from None
    thread.join()
    elapsed = time.monotonic() - started
    jobs = _jobs(runtime.store, ids)
    _print_summary(jobs, elapsed)
    dead = [entry for entry in runtime.store.list_dead_letters() if entry.job_id in set(ids)]
    for entry in dead:
        console.print(
            f"dead-letter entry {entry.id}: job {entry.job_id} {entry.job_type} after "
            f"{entry.attempts} attempts; last error: {entry.last_error}"
        )
    console.print("inspect with: dominus jobs list, dominus dlq list, dominus queue stats")


def _jobs(store: JobStore, ids: list[int]) -> list[Job]:
    wanted = set(ids)
    return [job for job in store.list_jobs(limit=len(ids) + 1000) if job.id in wanted]


def _show_progress(store: JobStore, ids: list[int], thread: threading.Thread) -> None:
    with Progress(
        TextColumn("running demo jobs"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=errors,
        transient=True,
    ) as progress:
        task = progress.add_task("demo", total=len(ids))
        while thread.is_alive():
            finished = sum(1 for job in _jobs(store, ids) if job.status.is_terminal)
            progress.update(task, completed=finished)
            thread.join(0.25)


def _print_summary(jobs: list[Job], elapsed: float) -> None:
    counts = Counter((job.job_type, job.status.value) for job in jobs)
    table = Table("type", "status", "jobs", title=f"demo finished in {elapsed:.1f} s")
    for (job_type, status), count in sorted(counts.items()):
        table.add_row(job_type, status, str(count))
    console.print(table)
