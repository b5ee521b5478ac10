"""What one rate-limiter call costs (ADR 0053): a grant, a refusal, a key without a limit, a
pause, on the database of `DATABASE_URL`-like argument (migrated first). In-process, one
thread, the real clock; the median of N calls in milliseconds.

    python bench/rate_limit_cost.py sqlite:///./data/bench-limits.db
    python bench/rate_limit_cost.py postgresql+psycopg://postgres@127.0.0.1:5432/bench_limits
"""

from __future__ import annotations

import statistics
import sys
import time
import uuid
from collections.abc import Callable

from dominus.db.engine import create_database_engine
from dominus.jobs import Limiters
from dominus.schema.migrate import upgrade

CALLS = 1000


def median_ms(call: Callable[[], object], calls: int = CALLS) -> float:
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main(url: str) -> None:
    engine = create_database_engine(url)
    upgrade(engine)
    limiters = Limiters.over(engine)
    run = uuid.uuid4().hex[:8]
    granted, refused, free = f"bench:{run}:granted", f"bench:{run}:refused", f"bench:{run}:free"
    limiters.configure(granted, "10000/h")
    limiters.configure(refused, "1/h")
    limiters.try_acquire(refused)
    figures = {
        "try_acquire, granted (1 statement)": median_ms(lambda: limiters.try_acquire(granted)),
        "try_acquire, refused (2 statements)": median_ms(lambda: limiters.try_acquire(refused)),
        "try_acquire, key without a limit (2)": median_ms(lambda: limiters.try_acquire(free)),
        "pause (3 statements)": median_ms(lambda: limiters.pause(refused, 60, "bench")),
    }
    print(f"{engine.dialect.name}, {CALLS} calls each, median ms")
    for name, value in figures.items():
        print(f"  {name}: {value:.3f}")
    engine.dispose()


if __name__ == "__main__":
    main(sys.argv[1])
