"""Saying, on stderr, when a command's lookups wait at a server's rate gate for a while:
`waiting for rdap.verisign.com until 12:03:10 UTC` (for `run --sync`, `portfolio rescore
--sync`, `watchlist poll`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from dominus.cli.output import errors
from dominus.providers.gate_waits import WAITING_FOR, Waits, describe_wait
from dominus.providers.rate_gate import RateGate, watched

# A shorter wait is the gate's ordinary pacing between requests: not worth a line.
NOTABLE_WAIT_SECONDS = 2.0


def printed_waits(
    gate: RateGate,
    show: Callable[[str], None] = errors.print,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> RateGate:
    """`gate`, showing each wait of NOTABLE_WAIT_SECONDS or more once."""
    shown: list[str] = []

    def tell(document: dict[str, str] | None) -> None:
        if document is None:
            return
        until = datetime.fromisoformat(document["until"])
        line = describe_wait({WAITING_FOR: document})
        if (until - now()).total_seconds() < NOTABLE_WAIT_SECONDS or line is None:
            return
        if not shown or shown[-1] != line:
            shown.append(line)
            show(line)

    return watched(gate, Waits(tell))
