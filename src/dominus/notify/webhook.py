"""The webhook notifier: each notification is POSTed as JSON to NOTIFY_WEBHOOK_URL.

A delivery is a 2xx answer. A timeout, a connection error, 408, 425, 429 or a 5xx is retried
(NOTIFY_WEBHOOK_RETRIES times, exponential backoff); any other answer (a 4xx, a redirect, which
is not followed) is not, since sending the same body again cannot change it. When every attempt
failed the notifier logs an ERROR and returns False: it never raises, so a broken webhook never
fails the job that sent the notification.

Each attempt is one exchange bounded as a whole (`dominus.bounded_http`): NOTIFY_WEBHOOK_TIMEOUT_S
covers connecting, sending and the answer's status line and headers together, however slowly
the receiver trickles them; the answer's body is not read. So a send ends within about
(retries + 1) × the timeout plus the backoff waits.

The URL can hold a secret (many services put the token in the path), so logs name its scheme
and host only.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import httpx

from dominus import __version__
from dominus.bounded_http import ExchangeError, ExchangeTimeoutError, exchange
from dominus.jobs.backoff import Backoff
from dominus.notify.model import Notification

log = logging.getLogger("dominus.notify")

RETRYABLE_STATUSES = frozenset({408, 425, 429})
DEFAULT_BACKOFF_SECONDS = 0.5
MAX_BACKOFF_SECONDS = 10.0


class WebhookNotifier:
    def __init__(
        self,
        url: str,
        *,
        timeout_seconds: float,
        retries: int,
        backoff_seconds: float = DEFAULT_BACKOFF_SECONDS,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if retries < 0:
            raise ValueError("retries must not be negative")
        self._url = url
        self._timeout = timeout_seconds
        self._retries = retries
        self._backoff = Backoff(backoff_seconds, max_seconds=MAX_BACKOFF_SECONDS)
        self._sleep = sleep
        parts = urlsplit(url)
        self.target = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"  # safe to log

    def send(self, notification: Notification) -> bool:
        body = notification.document()
        attempts = self._retries + 1
        for attempt in range(1, attempts + 1):
            problem, retryable = self._post(body)
            if problem is None:
                log.info("webhook %s: %s delivered", self.target, notification.event)
                return True
            if not retryable or attempt == attempts:
                log.error(
                    "webhook %s: %s not delivered after %d attempt(s): %s",
                    self.target,
                    notification.event,
                    attempt,
                    problem,
                )
                return False
            delay = self.delay_before(attempt + 1)
            log.warning(
                "webhook %s: attempt %d of %d failed (%s); next in %.2f s",
                self.target,
                attempt,
                attempts,
                problem,
                delay,
            )
            self._sleep(delay)
        return False  # not reached: the last attempt returns above

    def delay_before(self, attempt: int) -> float:
        """Seconds to wait before attempt number `attempt` (2, 3, ...): doubling, capped, no
        jitter."""
        return self._backoff.delay(failures=attempt - 1)

    def _post(self, body: dict[str, object]) -> tuple[str | None, bool]:
        """(None, _) when delivered, else (what went wrong, whether a retry may help)."""
        try:
            with httpx.Client(
                timeout=self._timeout,
                follow_redirects=False,
                headers={"User-Agent": f"dominus/{__version__}"},
            ) as client:
                answer = exchange(
                    client,
                    "POST",
                    self._url,
                    deadline_seconds=self._timeout,
                    max_bytes=0,  # the status says it all
                    json_body=body,
                )
        except ExchangeTimeoutError:
            return f"no answer within {self._timeout:g} s", True
        except (ExchangeError, httpx.HTTPError) as error:
            return f"{type(error).__name__}: {error}", True
        status = answer.status
        if 200 <= status < 300:
            return None, False
        return f"HTTP {status}", status in RETRYABLE_STATUSES or status >= 500
