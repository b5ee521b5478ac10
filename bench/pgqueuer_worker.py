"""Run a pgqueuer worker the way `pgq run` does, without its CLI.

    python pgqueuer_worker.py --batch-size 100 --mode drain|continuous

`pgq run` itself fails with the typer version pinned here (0.29.2): its `--log-level` option
reaches `logconfig.setup_fancy_logger` as a str and it raises
`AttributeError: 'str' object has no attribute 'name'` before starting, with or without the
option. So this script calls what `pgq run` calls after that point: `pgqueuer.run()` (the
documented programmatic entry point, "Run a worker from factory, as pgq run does") with the
factory `pgqueuer_tasks:create_manager`, on uvloop as `pgq run` does when uvloop is installed,
and pgqueuer's log level set to WARNING (as the other workers in the benchmark).
"""

from __future__ import annotations

import argparse
import logging
from datetime import timedelta

import pgqueuer
import uvloop
from pgqueuer.domain.types import QueueExecutionMode

FACTORY = "pgqueuer_tasks:create_manager"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=10)  # pgq run's default
    parser.add_argument("--mode", choices=("continuous", "drain"), default="continuous")
    parser.add_argument("--dequeue-timeout", type=float, default=30.0)  # pgq run's default
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("pgqueuer").setLevel(logging.WARNING)
    uvloop.run(
        pgqueuer.run(
            FACTORY,
            batch_size=args.batch_size,
            mode=QueueExecutionMode(args.mode),
            dequeue_timeout=timedelta(seconds=args.dequeue_timeout),
        )
    )


if __name__ == "__main__":
    main()
