"""A real TCP server on a loopback port standing in for registries' WHOIS servers (RFC 3912)."""

from __future__ import annotations

import contextlib
import socketserver
import threading
import time
from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True)
class WhoisReply:
    text: str = ""
    delay: float = 0.0  # seconds before answering (a slow server)
    raw: bytes | None = None  # sent as is instead of `text` (e.g. a flood of bytes)


NO_MATCH = WhoisReply('No match for "{query}".\r\n\r\n>>> Last update of WHOIS database <<<\r\n')


class FakeWhois:
    """Answers each query (the line the client sends, CRLF stripped, lower-cased) from
    `replies`, anything else with `default`. A query's list is consumed one reply per
    connection, the last one repeating; `{query}` in a text is replaced by the query. `hits`
    counts the connections per query."""

    def __init__(self, default: WhoisReply = NO_MATCH) -> None:
        self.replies: dict[str, list[WhoisReply]] = {}
        self.default = default
        self.hits: Counter[str] = Counter()
        self._lock = threading.Lock()
        fake = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                query = self.rfile.readline(1024).decode("ascii", "replace").strip().lower()
                with fake._lock:
                    fake.hits[query] += 1
                    count = fake.hits[query]
                replies = fake.replies.get(query, [fake.default])
                reply = replies[min(count, len(replies)) - 1]
                time.sleep(reply.delay)
                # OSError: the client gave up (timeout, size cap); nothing left to do.
                with contextlib.suppress(OSError):
                    self.wfile.write(reply.raw or reply.text.format(query=query).encode())

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.server = Server(("127.0.0.1", 0), Handler)
        host, self.port = self.server.server_address[:2]
        self.host = str(host)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def total_hits(self) -> int:
        with self._lock:
            return sum(self.hits.values())

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
