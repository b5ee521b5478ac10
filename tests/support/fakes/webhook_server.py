"""A real HTTP server on a loopback port standing in for a webhook receiver."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# (status, delay seconds before answering); consumed one per request, the last one repeating.
Answer = tuple[int, float]


class FakeWebhook:
    def __init__(self, answers: list[Answer] | None = None) -> None:
        self.answers: list[Answer] = answers or [(204, 0.0)]
        self.requests: list[dict[str, Any]] = []  # {"path", "headers", "body"} in arrival order
        self.received = threading.Condition()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                with fake.received:
                    index = len(fake.requests)
                    fake.requests.append(
                        {
                            "path": self.path,
                            "headers": {key.lower(): value for key, value in self.headers.items()},
                            "body": json.loads(raw) if raw else None,
                        }
                    )
                    fake.received.notify_all()
                status, delay = fake.answers[min(index, len(fake.answers) - 1)]
                time.sleep(delay)
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except OSError:
                    pass  # the client gave up waiting (a timeout test)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/secret-token"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def bodies(self) -> list[Any]:
        with self.received:
            return [request["body"] for request in self.requests]

    def wait_for(self, count: int, timeout: float = 10.0) -> bool:
        """Block until `count` requests have arrived (or `timeout`)."""
        with self.received:
            return self.received.wait_for(lambda: len(self.requests) >= count, timeout)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
