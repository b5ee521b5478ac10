"""Rate limits as values: `RateLimit` ("10/s", "60/min", "1/2s"), the rule for a limiter's key,
the `RATE_LIMITS` setting's list, what a key's state looks like, and `RateLimited`, which a
handler raises to pause a key for everyone and snooze its job (ADR 0053)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from dominus.errors import InvalidJobOptionError, InvalidRateLimitError
from dominus.jobs.snooze import MAX_SNOOZE_SECONDS, Snooze

# A limit is a row of slots per key (ADR 0053): a larger count is more likely a slip than a
# wish, and would make each configure write that many rows.
MAX_LIMIT_COUNT = 10_000
# The longest period and the longest pause: a week, as the longest snooze.
MAX_PERIOD_SECONDS = float(MAX_SNOOZE_SECONDS)
MAX_PAUSE_SECONDS = float(MAX_SNOOZE_SECONDS)
MAX_REASON_LENGTH = 500

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
# Slots stamped further ahead of a caller's `now` than this mean its clock was set back: they
# are brought back to `now`. Closer ones are left alone: they are another caller's grant made
# after this caller read its clock (a thread or a process a little behind), and pulling them
# back would let that window hold more than the limit.
CLOCK_SET_BACK_US = 60_000_000

KEY_MAX_LENGTH = 200
# No spaces, commas or '=' (the RATE_LIMITS list separates with them), no '/' (a key is a URL's
# path segment): `rdap:rdap.verisign.com`, `whois:whois.nic.io`, `api:example.com`.
KEY_PATTERN = r"^[A-Za-z0-9_.:@+\-]{1,200}$"
_KEY = re.compile(KEY_PATTERN)

_UNITS = {
    "ms": 0.001,
    "s": 1.0,
    "sec": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "m": 60.0,
    "min": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hour": 3600.0,
    "hours": 3600.0,
    "d": 86_400.0,
    "day": 86_400.0,
    "days": 86_400.0,
}
_LIMIT = re.compile(r"^\s*(-?\d+)\s*/\s*(-?\d+(?:\.\d+)?)?\s*([a-z]+)\s*$")


def microseconds(moment: datetime) -> int:
    """`moment` as whole microseconds since the epoch (exact, unlike a float timestamp)."""
    return (moment - _EPOCH) // _MICROSECOND


def moment_of(us: int) -> datetime:
    """The UTC moment `us` microseconds after the epoch (the inverse of `microseconds`)."""
    return _EPOCH + timedelta(microseconds=us)


def check_key(key: str) -> str:
    """`key` if it names a limiter; InvalidRateLimitError (one line) otherwise."""
    return _checked_key(key, InvalidRateLimitError, "a rate-limit key is")


def check_rate_key(key: object, where: str = "") -> str:
    """`key` if it may be a job's `rate_key` (a limiter's key); InvalidJobOptionError in one
    line otherwise, as every other enqueue option."""
    return _checked_key(key, InvalidJobOptionError, f"{where}rate_key must be")


def _checked_key(key: object, error: type[Exception], subject: str) -> str:
    if not isinstance(key, str) or _KEY.fullmatch(key) is None:
        shown = key[:80] if isinstance(key, str) else type(key).__name__
        raise error(
            f"{subject} 1 to {KEY_MAX_LENGTH} characters of letters, digits and '_.:@+-', "
            f"got {shown!r}"
        )
    return key


@dataclass(frozen=True)
class RateLimit:
    """At most `count` grants in any window of `period_seconds`."""

    count: int
    period_seconds: float

    def __post_init__(self) -> None:
        count, period = self.count, self.period_seconds
        if isinstance(count, bool) or not isinstance(count, int):
            raise InvalidRateLimitError(f"a rate limit's count is a whole number, got {count!r}")
        if not 1 <= count <= MAX_LIMIT_COUNT:
            raise InvalidRateLimitError(
                f"a rate limit's count must be 1 to {MAX_LIMIT_COUNT}, got {count}"
            )
        if isinstance(period, bool) or not isinstance(period, int | float):
            raise InvalidRateLimitError(f"a rate limit's period is seconds, got {period!r}")
        if not math.isfinite(period) or not 0 < period <= MAX_PERIOD_SECONDS:
            raise InvalidRateLimitError(
                f"a rate limit's period must be more than 0 and at most {MAX_PERIOD_SECONDS:g} "
                f"seconds, got {period!r}"
            )
        # Whole microseconds: the grants are kept in microseconds (ADR 0053).
        object.__setattr__(self, "period_seconds", self.period_us / 1_000_000)

    @property
    def period_us(self) -> int:
        return max(1, round(self.period_seconds * 1_000_000))

    @classmethod
    def parse(cls, text: str) -> RateLimit:
        """`COUNT/PERIOD`: `10/s`, `60/min`, `1/2s`, `5/0.5s`, `1000/h`, `3/day`."""
        match = _LIMIT.fullmatch(text.lower()) if isinstance(text, str) else None
        if match is None or match.group(3) not in _UNITS:
            raise InvalidRateLimitError(
                f"a rate limit is COUNT/PERIOD such as 10/s, 60/min or 1/2s, got {text!r}"
            )
        count_text, amount_text, unit = match.groups()
        amount = float(amount_text) if amount_text is not None else 1.0
        return cls(int(count_text), amount * _UNITS[unit])

    def __str__(self) -> str:
        period = self.period_seconds
        return f"{self.count}/s" if period == 1 else f"{self.count}/{period:g}s"


def parse_rate_limits(text: str) -> dict[str, RateLimit]:
    """The `RATE_LIMITS` setting: `KEY=LIMIT,KEY=LIMIT` (`rdap:rdap.verisign.com=10/s,...`).
    Raises InvalidRateLimitError naming the entry; a key named twice is refused."""
    limits: dict[str, RateLimit] = {}
    for entry in (part.strip() for part in text.split(",")):
        if not entry:
            continue
        key, sep, limit = entry.rpartition("=")
        if not sep:
            raise InvalidRateLimitError(f"RATE_LIMITS: {entry!r} is not KEY=LIMIT such as k=10/s")
        try:
            check_key(key.strip())
            parsed = RateLimit.parse(limit)
        except InvalidRateLimitError as error:
            raise InvalidRateLimitError(f"RATE_LIMITS: {entry!r}: {error}") from error
        if key.strip() in limits:
            raise InvalidRateLimitError(f"RATE_LIMITS: {key.strip()!r} is named twice")
        limits[key.strip()] = parsed
    return limits


@dataclass(frozen=True)
class KeyState:
    """A limiter's key as the database holds it. `paused_until` is None once the pause has
    passed (or was never set)."""

    key: str
    limit: RateLimit | None
    paused_until: datetime | None
    pause_reason: str | None
    updated_at: datetime
    # After a resume: the waiting jobs it made due at once (see `RateLimitStore.resume`).
    brought_forward: int = 0

    @property
    def paused(self) -> bool:
        return self.paused_until is not None


class RateLimited(Snooze):
    """Raise from a handler when `key` is rate limited (a 429 with Retry-After, say): the key is
    paused for every process until `retry_after_seconds` from now (a later pause already there
    is kept), and the job is snoozed until the pause ends, its attempt not spent.

    Raised by `Limiters.acquire` when its deadline would pass before a grant; then the database
    already holds the key until then (`enforced`), and no pause is written."""

    def __init__(
        self,
        key: str,
        retry_after_seconds: float,
        reason: str = "",
        *,
        enforced: bool = False,
    ) -> None:
        if isinstance(retry_after_seconds, bool) or not isinstance(
            retry_after_seconds, int | float
        ):
            raise TypeError(
                f"RateLimited takes a number of seconds, got {type(retry_after_seconds).__name__}"
            )
        if not math.isfinite(retry_after_seconds) or retry_after_seconds < 0:
            raise ValueError(f"RateLimited takes 0 seconds or more, got {retry_after_seconds!r}")
        # The job sleeps at most a snooze's longest; the key stays paused for the whole time.
        super().__init__(min(float(retry_after_seconds), MAX_SNOOZE_SECONDS))
        self.key = key
        self.retry_after_seconds = float(retry_after_seconds)
        self.reason = reason
        self.enforced = enforced
        self.args = (f"{key} is rate limited for {retry_after_seconds:g} s",)
