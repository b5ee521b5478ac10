"""A real HTTP server on a loopback port standing in for RDAP servers (and IANA's bootstrap)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# (status, headers, body, delay seconds); a path's list is consumed one response per request,
# the last one repeating.
Reply = tuple[int, dict[str, str], bytes, float]

NOT_FOUND: Reply = (404, {}, b"{}", 0.0)


def bootstrap_doc(base: str, tlds: Sequence[str] = ("test",)) -> dict[str, object]:
    """An RFC 9224 bootstrap document sending `tlds` to `base`."""
    return {"version": "1.0", "publication": "test", "services": [[list(tlds), [base]]]}


class FakeRdap:
    """Answers each path from `routes`, anything else with `default` (404 by default). `hits`
    counts the requests per path; `arrivals` is when (time.monotonic()) each came, and
    `arrival_paths` the path of each, in the same order. With `rate_limit=(n, seconds)` a
    request that makes more than n in the last `seconds` (every arrival counts, refused ones
    too) is answered 429 with `retry_after` as its Retry-After, whatever its path, as a
    rate-limiting registry would; `refusals` is when each such request came and `refused`
    counts them per path."""

    def __init__(
        self,
        default: Reply = NOT_FOUND,
        rate_limit: tuple[int, float] | None = None,
        *,
        retry_after: str = "1",
    ) -> None:
        self.routes: dict[str, list[Reply]] = {}
        self.default = default
        self.rate_limit = rate_limit
        self.too_many: Reply = (429, {"Retry-After": retry_after}, b"", 0.0)
        self.hits: Counter[str] = Counter()
        self.arrivals: list[float] = []
        self.arrival_paths: list[str] = []
        self.refusals: list[float] = []
        self.refused: Counter[str] = Counter()
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with fake._lock:
                    now = time.monotonic()
                    fake.arrivals.append(now)
                    fake.arrival_paths.append(self.path)
                    fake.hits[self.path] += 1
                    count = fake.hits[self.path]
                    limited = fake._over_limit(now)
                    if limited:
                        fake.refusals.append(now)
                        fake.refused[self.path] += 1
                replies = fake.routes.get(self.path, [fake.default])
                status, headers, body, delay = (
                    fake.too_many if limited else replies[min(count, len(replies)) - 1]
                )
                time.sleep(delay)
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass  # keep test output clean

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}/rdap/"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def _over_limit(self, now: float) -> bool:
        if self.rate_limit is None:
            return False
        most, seconds = self.rate_limit
        return sum(1 for moment in self.arrivals if moment > now - seconds) > most

    def most_in_any_window(self, seconds: float) -> int:
        """The most requests that arrived within any `seconds` (by this server's clock)."""
        with self._lock:
            moments = sorted(self.arrivals)
        return max(
            (
                sum(1 for later in moments[index:] if later - moment < seconds)
                for index, moment in enumerate(moments)
            ),
            default=0,
        )

    def total_hits(self) -> int:
        with self._lock:
            return sum(self.hits.values())

    def answered_paths(self) -> set[str]:
        """The paths at least one request of which was answered other than by the rate limit."""
        with self._lock:
            return {path for path, count in self.hits.items() if count > self.refused[path]}

    def hits_snapshot(self) -> Counter[str]:
        with self._lock:
            return Counter(self.hits)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
