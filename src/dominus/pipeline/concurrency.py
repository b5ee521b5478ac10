"""Bounded concurrent lookups that stop early: on the run's stop signal, or when the stage's
time budget runs out (what was answered by then is kept)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Generic, TypeVar

from dominus.providers.models import StopSignal

T = TypeVar("T")
R = TypeVar("R")

# How often the loop wakes up to look at the stop signal and the deadline.
WAKE_SECONDS = 0.1


@dataclass
class Lookups(Generic[T, R]):
    results: dict[T, R]
    complete: bool  # False: stopped or out of time before every item was looked up


def bounded_map(
    items: Sequence[T],
    lookup: Callable[[T], R],
    *,
    concurrency: int,
    stop: StopSignal,
    deadline: float,
    on_done: Callable[[int], None],
    results: dict[T, R],
) -> Lookups[T, R]:
    """Run `lookup` over `items` (those already in `results` are skipped), at most `concurrency`
    at a time, until all are done, `stop` is set or `time.monotonic()` passes `deadline`.
    Results land in `results` as they arrive, so a caller that gives up keeps them. On a stop or
    at the deadline it returns at once: lookups still in flight finish in the background (each is
    bounded by its own timeout) and their answers are dropped."""
    pending = [item for item in items if item not in results]
    in_flight: dict[Future[R], T] = {}
    next_index = 0
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="pipeline")
    try:
        while next_index < len(pending) or in_flight:
            if stop.is_set() or time.monotonic() >= deadline:
                break
            while next_index < len(pending) and len(in_flight) < concurrency:
                item = pending[next_index]
                in_flight[pool.submit(lookup, item)] = item
                next_index += 1
            done, _ = wait(in_flight, timeout=WAKE_SECONDS, return_when=FIRST_COMPLETED)
            if time.monotonic() >= deadline:
                break  # an answer now may be one the deadline cut short: dropped with the rest
            for future in done:
                item = in_flight.pop(future)
                results[item] = future.result()
            if done:
                on_done(len(results))
    finally:
        pool.shutdown(wait=not in_flight, cancel_futures=True)
    return Lookups(results, complete=all(item in results for item in items))


class StopAtDeadline:
    """`stop`, and also set once `time.monotonic()` passes `deadline`: what a stage's lookups
    watch, so that one still waiting when the stage's time is up (at a server's rate gate, say)
    ends then instead of waiting on in the background, or holding the process at its exit."""

    def __init__(self, stop: StopSignal, deadline: float) -> None:
        self._stop = stop
        self._deadline = deadline

    def is_set(self) -> bool:
        return self._stop.is_set() or time.monotonic() >= self._deadline

    def wait(self, timeout: float | None = None) -> bool:
        left = self._deadline - time.monotonic()
        if left <= 0:
            return True
        if self._stop.wait(left if timeout is None else min(timeout, left)):
            return True
        return self.is_set()
