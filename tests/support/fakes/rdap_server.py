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
    counts the requests per path."""

    def __init__(self, default: Reply = NOT_FOUND) -> None:
        self.routes: dict[str, list[Reply]] = {}
        self.default = default
        self.hits: Counter[str] = Counter()
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with fake._lock:
                    fake.hits[self.path] += 1
                    count = fake.hits[self.path]
                replies = fake.routes.get(self.path, [fake.default])
                status, headers, body, delay = replies[min(count, len(replies)) - 1]
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

    def total_hits(self) -> int:
        with self._lock:
            return sum(self.hits.values())

    def hits_snapshot(self) -> Counter[str]:
        with self._lock:
            return Counter(self.hits)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
