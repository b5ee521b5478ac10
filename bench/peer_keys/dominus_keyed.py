"""DOMINUS in the shared peer benchmark with keys and limits in use (ADR 0052, 0053): the harness's
own DOMINUS adapters, with every job carrying a concurrency key, a rate key or both, whose limits
never bind (10,000 running; 10,000 a second, configured before the run), so that each claim pays
for the key's count and the limiter's token as it would in production, and nothing waits.
`*_keyed` systems carry both; `*_ckey` the concurrency key alone; `*_rkey` the rate key alone.

Not part of the project's package: `bench/peer_keys/run.sh` copies the shared harness to a
scratch directory, adds this file and its two registry lines, and runs it there; the shared
harness itself is left as it is.
"""

from __future__ import annotations

from typing import Any

from adapters import RunCtx
from adapters.dominus_jobs import DominusPg, DominusSqlite

from dominus.db.engine import create_database_engine
from dominus.jobs import EnqueueRequest, Limiters

KEY = "bench"
CONCURRENCY_LIMIT = 10_000  # far above any worker's concurrency: counted, never binding
RATE_LIMIT = "10000/s"  # far above any drain rate on this machine: taken, never binding


class _Keyed:
    """Mixed into the harness's adapters: keyed enqueues and the key's limit configured."""

    with_concurrency_key = True
    with_rate_key = True

    def _keys(self) -> dict[str, Any]:
        keys: dict[str, Any] = {}
        if self.with_concurrency_key:
            keys |= {"concurrency_key": KEY, "concurrency_limit": CONCURRENCY_LIMIT}
        if self.with_rate_key:
            keys |= {"rate_key": KEY}
        return keys

    def setup(self, ctx: RunCtx) -> None:
        super().setup(ctx)  # type: ignore[misc]
        engine = create_database_engine(self._url(ctx))  # type: ignore[attr-defined]
        try:
            Limiters.over(engine).configure(KEY, RATE_LIMIT)
        finally:
            engine.dispose()

    def enqueue_one(self, i: int, t_enq: float) -> None:
        self.q.enqueue_job("noop", {"i": i, "t": t_enq}, **self._keys())  # type: ignore[attr-defined]

    def enqueue_batch(self, items: list[tuple[int, float]]) -> None:
        self.q.enqueue_jobs(  # type: ignore[attr-defined]
            [EnqueueRequest("noop", {"i": i, "t": t}, **self._keys()) for i, t in items]
        )

    def versions(self) -> dict[str, Any]:
        found: dict[str, Any] = super().versions()  # type: ignore[misc]
        return found | {"keys": self._keys(), "rate_limit": RATE_LIMIT}


class DominusSqliteKeyed(_Keyed, DominusSqlite):
    name = "dominus_sqlite_keyed"


class DominusSqliteConcurrencyKey(DominusSqliteKeyed):
    name = "dominus_sqlite_ckey"
    with_rate_key = False


class DominusSqliteRateKey(DominusSqliteKeyed):
    name = "dominus_sqlite_rkey"
    with_concurrency_key = False


class DominusPgKeyed(_Keyed, DominusPg):
    name = "dominus_pg_keyed"


class DominusPgConcurrencyKey(DominusPgKeyed):
    name = "dominus_pg_ckey"
    with_rate_key = False


class DominusPgRateKey(DominusPgKeyed):
    name = "dominus_pg_rkey"
    with_concurrency_key = False
