"""`Snooze`: a handler's way to say "not now, try me again in N seconds" (ADR 0050).

Raised by a handler, the job goes back to pending with `run_at = now + seconds`, the attempt
not spent and no error recorded: waiting for something outside (a rate limit, a file not there
yet) is not a failure, and must not use up the job's attempts or land it in the dead-letter
queue. Like a completion, the snooze is written only while the attempt still holds its claim
(ADR 0024): a worker that lost its job cannot push the newer attempt back."""

from __future__ import annotations

import math

# A snooze longer than this is refused: it is more likely a unit slip (ms for s) than a wish.
MAX_SNOOZE_SECONDS = 7 * 86_400


class Snooze(Exception):  # noqa: N818 - named for what the handler asks, as Oban's {:snooze, n}
    """Raise from a handler to run the job again `seconds` from now, without spending an
    attempt."""

    def __init__(self, seconds: float) -> None:
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise TypeError(f"Snooze takes a number of seconds, got {type(seconds).__name__}")
        if not math.isfinite(seconds) or not 0 <= seconds <= MAX_SNOOZE_SECONDS:
            raise ValueError(f"Snooze takes 0 to {MAX_SNOOZE_SECONDS} seconds, got {seconds!r}")
        super().__init__(f"snoozed for {seconds:g} s")
        self.seconds = float(seconds)
