"""Helpers shared by all measurements: sizes, statistics, waiting, processes."""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

# Gaps between the enqueues of the pickup-latency measurement (seconds, uniform).
LATENCY_GAP_SECONDS = (0.020, 0.060)
# How long a worker/consumer sits idle, once it is known to be up, before the latency jobs come.
IDLE_BEFORE_LATENCY_SECONDS = 1.0
# Concurrency of the worker/consumer in the pickup-latency measurement.
LATENCY_CONCURRENCY = 2


@dataclass(frozen=True)
class Sizes:
    single_enqueue: int
    batched_enqueue: int
    batch_size: int
    drain_jobs: int
    concurrencies: tuple[int, ...]
    latency_jobs: int
    prefill_rows: int
    # PostgreSQL: one-process drains at these concurrencies (the last one is the "high" one,
    # set against pgqueuer's batch size), then drains by 1, 2, 4 processes at
    # `process_concurrency` each, and pgqueuer's batch size.
    pg_concurrencies: tuple[int, ...] = (1, 4, 16, 100)
    processes: tuple[int, ...] = (1, 2, 4)
    process_concurrency: int = 100
    pgqueuer_batch_size: int = 100
    # Untimed enqueues first (connection set-up, statement compilation), for both systems.
    warmup: int = 100


FULL = Sizes(
    single_enqueue=5_000,
    batched_enqueue=50_000,
    batch_size=1_000,
    drain_jobs=20_000,
    concurrencies=(1, 4, 16),
    latency_jobs=200,
    prefill_rows=1_000_000,
)
QUICK = replace(
    FULL,
    single_enqueue=500,
    batched_enqueue=5_000,
    drain_jobs=2_000,
    latency_jobs=30,
    prefill_rows=0,
)


@dataclass(frozen=True)
class Drain:
    """One drain run. `throughput` comes from timestamps written by the jobs' own processing
    (first start to last completion); `wall_seconds` includes process start-up."""

    jobs: int
    throughput: float
    wall_seconds: float
    # PostgreSQL drains: CPU time (user + system) of the worker process(es) and of the
    # PostgreSQL server during the drain (first job start to last job end), and that span.
    worker_cpu_seconds: float | None = None
    db_cpu_seconds: float | None = None
    cpu_span_seconds: float | None = None


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def percentiles(samples: Sequence[float]) -> dict[str, float]:
    """p50, p95 and p99 (linear interpolation between the closest ranks)."""
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return {"p50": cuts[49], "p95": cuts[94], "p99": cuts[98]}


def wait_for(condition: Callable[[], bool], *, timeout: float, interval: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


def stop_process(
    process: subprocess.Popen[bytes], sig: int = signal.SIGTERM, timeout: float = 60
) -> int:
    """Stop a process this benchmark started: `sig`, then SIGKILL if it does not exit."""
    if process.poll() is None:
        process.send_signal(sig)
        try:
            return process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            return process.wait()
    return process.returncode


def wait_all(
    processes: Sequence[subprocess.Popen[bytes]],
    timeout: float,
    on_tick: Callable[[], None] | None = None,
) -> tuple[list[int], float]:
    """Wait for every process to exit, calling `on_tick()` every few milliseconds; returns
    their exit codes and the CPU time (user + system, all threads) they used, from
    `os.wait4`. Raises TimeoutError (processes left running, for the caller to deal with)
    after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    cpu = 0.0
    pending = list(processes)
    while pending:
        for process in list(pending):
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid == 0:
                continue
            process.returncode = os.waitstatus_to_exitcode(status)
            cpu += usage.ru_utime + usage.ru_stime
            pending.remove(process)
        if on_tick is not None:
            on_tick()
        if pending:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(pending)} process(es) still running after {timeout:g} s")
            time.sleep(0.005)
    return [process.returncode for process in processes], cpu


def process_cpu_seconds(pid: int) -> float:
    """CPU time (user + system, all threads) a live process has used so far (Linux /proc)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rfind(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_logged(
    command: Sequence[str | Path], *, env: dict[str, str], cwd: Path, log: Path
) -> subprocess.Popen[bytes]:
    """Start `command` with its stdout and stderr going to `log` (created afresh)."""
    with log.open("wb") as out:
        return subprocess.Popen(
            [str(part) for part in command],
            env=env,
            cwd=cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def ensure_running(process: subprocess.Popen[bytes], name: str, log: Path) -> None:
    if process.poll() is not None:
        raise RuntimeError(f"{name} exited early with code {process.returncode}:\n{tail(log)}")


def tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def remove_db(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
