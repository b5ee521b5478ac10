"""Reclaiming the jobs of silent workers, and knowing when silence is evidence.

A running job whose heartbeat is older than the max running age is taken to belong to a dead
worker and goes back to pending (or to the dead-letter queue on its last attempt). That judgement
is only sound if the owner could have heartbeated: when the database itself was unreachable or
stalled, every worker went silent together, and reclaiming their jobs the moment it comes back
would throw away results they already hold. So a reaper that saw the database fail or stall
does not judge anyone's silence until it has been in good contact for a full max running age
again. A live owner heartbeats well within that window (its retries are capped at the heartbeat
interval while it holds claims); a dead one stays silent and is reclaimed, one max age late.

Its own claims are never at risk from its own reaper: the worker heartbeats every claim it holds,
finished-but-unrecorded ones included, before the reaper runs in the same tick (see `Worker`).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from dominus.jobs.model import ReclaimedJob
from dominus.jobs.store import JobStore, RetryDelay

log = logging.getLogger("dominus.worker")

_EPOCH = datetime.min.replace(tzinfo=UTC)


class StaleJobReaper:
    """Owned by the worker's loop thread (all methods are called from it)."""

    def __init__(
        self,
        store: JobStore,
        *,
        max_running_age_seconds: float,
        interval_seconds: float,
        retry_delay: RetryDelay,
    ) -> None:
        self._store = store
        self._max_age = timedelta(seconds=max_running_age_seconds)
        self._interval = timedelta(seconds=interval_seconds)
        self._retry_delay = retry_delay
        self._next_at = _EPOCH
        # No reclaiming before this: the end of a max age of good contact after trouble.
        self._trusted_from = _EPOCH

    @property
    def stall_seconds(self) -> float:
        """A tick slower than this was a stall long enough that live workers blocked by it too
        may have stayed silent for close to the max running age."""
        return self._max_age.total_seconds() / 2

    def database_trouble(self, now: datetime) -> None:
        """The database failed or stalled for this worker at about `now`."""
        trusted_from = now + self._max_age
        if trusted_from > self._trusted_from:
            if self._trusted_from <= now:
                log.info(
                    "database trouble: not reclaiming other workers' jobs until %s "
                    "(they may have been cut off too)",
                    trusted_from.isoformat(timespec="seconds"),
                )
            self._trusted_from = trusted_from

    def next_due(self) -> datetime:
        return max(self._next_at, self._trusted_from)

    def maybe_reclaim(self, now: datetime) -> list[ReclaimedJob]:
        """Reclaim stale jobs if a pass is due and silence can be trusted; returns them."""
        if now < self.next_due():
            return []
        reclaimed = self._store.reclaim_stale(now, self._max_age.total_seconds(), self._retry_delay)
        self._next_at = now + self._interval
        for job in reclaimed:
            log.warning(
                "job %d %s reclaimed from silent worker %s (attempt %d)%s",
                job.job_id,
                job.job_type,
                job.from_worker,
                job.attempt,
                "; attempts exhausted, dead-lettered" if job.dead_lettered else "",
            )
        return reclaimed
