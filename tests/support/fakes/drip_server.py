"""A loopback HTTP server that answers a byte at a time (headers included), a pause between
bytes: a server that never lets a per-read timeout fire, yet never finishes its answer. (With
no pause and bigger pieces it sends any raw answer, e.g. a flood.)"""

from __future__ import annotations

import contextlib
import socket
import threading

HTTP_OK = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/rdap+json\r\nContent-Length: 200\r\n\r\n"
    + b'{"objectClassName": "domain", "ldhName": "'
    + b"x" * 150
    + b'"}'
)


class DripServer:
    """Every connection: the request is read, then `answer` is sent `chunk_size` bytes each
    `interval` seconds. `requests` holds each request's first line; `finished` counts the
    connections that ended (the client hung up, or the answer was all sent)."""

    def __init__(self, answer: bytes = HTTP_OK, interval: float = 1.0, chunk_size: int = 1) -> None:
        self.answer = answer
        self.interval = interval
        self.chunk_size = chunk_size
        self.requests: list[str] = []
        self.finished = 0
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection, contextlib.suppress(OSError):
            request = self._read_request(connection)
            with self._lock:
                self.requests.append(request.split(b"\r\n", 1)[0].decode("latin-1"))
            for start in range(0, len(self.answer), self.chunk_size):
                if self._closing.is_set():
                    break
                connection.sendall(self.answer[start : start + self.chunk_size])
                if self.interval and self._closing.wait(self.interval):
                    break
        with self._lock:
            self.finished += 1

    @staticmethod
    def _read_request(connection: socket.socket) -> bytes:
        connection.settimeout(5)
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = connection.recv(4096)
            if not chunk:
                break
            received += chunk
        head, _, body = received.partition(b"\r\n\r\n")
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                missing = int(value.strip()) - len(body)
                while missing > 0:
                    chunk = connection.recv(min(missing, 65536))
                    if not chunk:
                        break
                    missing -= len(chunk)
        return head

    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    def close(self) -> None:
        self._closing.set()
        self._thread.join(timeout=5)
        self._listener.close()
