"""Named queues: the rule for a queue's name, and how a worker shares its slots among the queues
it takes (`dominus worker --queue NAME[=N]`). See ADR 0050.

A queue is only a name on a job: nothing has to create it first. Its pause state lives in the
`job_queues` table, which every claim reads in the same statement.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from dominus.errors import InvalidJobOptionError
from dominus.jobs.model import DEFAULT_QUEUE

QUEUE_NAME_MAX_LENGTH = 64
QUEUE_NAME_PATTERN = r"^[a-z0-9_.\-]{1,64}$"
_QUEUE_NAME = re.compile(QUEUE_NAME_PATTERN)
# The queue of housekeeping jobs (backups, pruning): a worker of its own can keep them from
# waiting behind a backlog of other work, or a pause of the other queues.
MAINTENANCE_QUEUE = "maintenance"

__all__ = [
    "DEFAULT_QUEUE",
    "MAINTENANCE_QUEUE",
    "QUEUE_NAME_PATTERN",
    "QueueShares",
    "check_queue_name",
    "parse_queue_option",
]


def check_queue_name(name: str, where: str = "") -> str:
    """`name` if it is a queue's name (1–64 characters of a-z, 0-9, `_`, `.`, `-`); raises
    InvalidJobOptionError, in one line, otherwise."""
    if not isinstance(name, str) or _QUEUE_NAME.fullmatch(name) is None or "\n" in name:
        shown = name if isinstance(name, str) else type(name).__name__
        raise InvalidJobOptionError(
            f"{where}queue must be 1 to {QUEUE_NAME_MAX_LENGTH} characters of a-z, 0-9, "
            f"'_', '.' and '-', got {shown[:80]!r}"
        )
    return name


@dataclass(frozen=True)
class QueueShares:
    """The queues a worker takes and the share of its concurrency each may hold.

    A queue with a share N never has more than N of the worker's attempts at once (claimed ahead
    included); the queues without one share the slots the shares leave. `queues` empty: every
    queue, as before named queues existed."""

    shares: Mapping[str, int | None]

    @property
    def every_queue(self) -> bool:
        return not self.shares

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self.shares))

    @property
    def shared(self) -> dict[str, int]:
        return {name: share for name, share in self.shares.items() if share is not None}

    @property
    def unshared(self) -> tuple[str, ...]:
        return tuple(sorted(name for name, share in self.shares.items() if share is None))

    def check(self, concurrency: int) -> None:
        """Raise InvalidJobOptionError when the shares add up to more than `concurrency`."""
        total = sum(self.shared.values())
        if total > concurrency:
            raise InvalidJobOptionError(
                f"the queue shares add up to {total}, more than the worker's concurrency "
                f"{concurrency}"
            )


EVERY_QUEUE = QueueShares({})


def parse_queue_option(values: Iterable[str]) -> QueueShares:
    """`--queue NAME[=N]` values, repeated, as shares. Raises InvalidJobOptionError (one line)
    for a bad name, a share that is not a whole number of at least 1, or a queue named twice."""
    shares: dict[str, int | None] = {}
    for value in values:
        name, sep, count = value.partition("=")
        check_queue_name(name, "--queue: ")
        if name in shares:
            raise InvalidJobOptionError(f"--queue: {name!r} is named twice")
        share: int | None = None
        if sep:
            if not count.isdigit() or int(count) < 1:
                raise InvalidJobOptionError(
                    f"--queue: the share of {name!r} must be a whole number of at least 1, "
                    f"got {count!r}"
                )
            share = int(count)
        shares[name] = share
    return QueueShares(shares)
