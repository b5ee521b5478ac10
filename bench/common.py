"""Helpers shared by the DOMINUS and huey measurements: sizes, statistics, waiting, processes."""

from __future__ import annotations

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
