"""Many open Server-Sent Event streams against a real `dominus serve` (uvicorn, its default thread
pool of 40), on SQLite and PostgreSQL: the rest of the API keeps answering, SIGTERM still stops
the server, the per-process cap answers 429 before streaming, and a client that goes away gives
its slot back at once.

Streams are raw sockets, so that the test can hold dozens open without a thread each and close
them the way a client that went away does (the TCP connection just ends)."""

from __future__ import annotations

import re
import socket
from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.support.api import API, assert_error
from tests.support.polling import wait_until
from tests.support.serving import ServeProcess, serve_env

pytestmark = [pytest.mark.slow, pytest.mark.backends("sqlite", "postgresql")]

# More than the 40 threads of the server's pool: each stream held one of them before streams
# became asynchronous.
MANY_STREAMS = 60
# A liveness bound, not a performance target: on the old code /health took 4-15 s or more.
ANSWER_TIMEOUT_SECONDS = 5


class RawStream:
    """One `GET …/stream` on its own non-blocking socket."""

    def __init__(self, port: int, path: str) -> None:
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=10)
        head = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream"
        self.socket.sendall(f"{head}\r\n\r\n".encode())
        self.socket.setblocking(False)
        self.received = b""

    def read(self) -> bytes:
        """Everything received so far."""
        try:
            while chunk := self.socket.recv(65536):
                self.received += chunk
        except (BlockingIOError, ConnectionError):
            pass
        return self.received

    def is_streaming(self) -> bool:
        """The stream answered 200 and sent its first `job` event."""
        data = self.read()
        return data.startswith(b"HTTP/1.1 200") and b"event: job" in data

    def close(self) -> None:
        self.socket.close()


@pytest.fixture
def open_streams() -> Iterator[Callable[[ServeProcess, str, int], list[RawStream]]]:
    opened: list[RawStream] = []

    def start(server: ServeProcess, path: str, count: int) -> list[RawStream]:
        streams = [RawStream(server.port, path) for _ in range(count)]
        opened.extend(streams)
        return streams

    yield start
    for stream in opened:
        stream.close()


def start_server(
    serve_processes: Callable[..., ServeProcess], database_url: str, **settings: str
) -> ServeProcess:
    # No worker: the jobs the streams follow stay pending, so the streams never end.
    server = serve_processes("--diagnostic-jobs", env=serve_env(database_url, **settings))
    server.wait_ready()
    return server


def pending_job(http: httpx.Client) -> int:
    response = http.post(f"{API}/jobs", json={"type": "diag.noop"})
    assert response.status_code == 202, response.text
    job_id: int = response.json()["id"]
    return job_id


def open_stream_gauge(http: httpx.Client) -> float:
    """`dominus_api_open_streams` from the server's Prometheus metrics."""
    text = http.get(f"{API}/metrics").text
    found = re.search(r"^dominus_api_open_streams (\S+)$", text, re.MULTILINE)
    assert found, f"no dominus_api_open_streams gauge in:\n{text}"
    return float(found.group(1))


def answer_quickly(request: Callable[[], httpx.Response], what: str) -> httpx.Response:
    try:
        return request()
    except httpx.TimeoutException:
        raise AssertionError(
            f"{what} got no answer within {ANSWER_TIMEOUT_SECONDS} s "
            f"with {MANY_STREAMS} streams open"
        ) from None


def test_many_open_streams_leave_the_api_answering(
    backend: str,
    database_url: str,
    serve_processes: Callable[..., ServeProcess],
    open_streams: Callable[[ServeProcess, str, int], list[RawStream]],
) -> None:
    server = start_server(serve_processes, database_url)
    with server.http() as http:
        job_id = pending_job(http)
        streams = open_streams(server, f"{API}/jobs/{job_id}/stream", MANY_STREAMS)
        # At least as many as the old code could serve at all, so that they hold their threads.
        wait_until(
            lambda: sum(stream.is_streaming() for stream in streams) >= 40,
            timeout=30,
            message="40 streams under way",
        )
        health = answer_quickly(
            lambda: http.get(f"{API}/health", timeout=ANSWER_TIMEOUT_SECONDS), "GET /health"
        )
        assert health.status_code == 200, health.text
        created = answer_quickly(
            lambda: http.post(
                f"{API}/jobs", json={"type": "diag.noop"}, timeout=ANSWER_TIMEOUT_SECONDS
            ),
            "POST /jobs",
        )
        assert created.status_code == 202, created.text
        wait_until(
            lambda: all(stream.is_streaming() for stream in streams),
            timeout=30,
            message=f"all {MANY_STREAMS} streams under way",
        )
        assert open_stream_gauge(http) == MANY_STREAMS
        # Streams on jobs that never end do not hold up a graceful stop (uvicorn waits for
        # every open connection; the streams end once the server is stopping).
        assert server.terminate_and_wait(30) == 0, server.output()


def test_the_stream_cap_answers_429_and_a_gone_client_frees_its_slot(
    backend: str,
    database_url: str,
    serve_processes: Callable[..., ServeProcess],
    open_streams: Callable[[ServeProcess, str, int], list[RawStream]],
) -> None:
    server = start_server(serve_processes, database_url, DOMINUS_MAX_STREAMS="5")
    with server.http() as http:
        path = f"{API}/jobs/{pending_job(http)}/stream"
        streams = open_streams(server, path, 5)
        wait_until(lambda: all(stream.is_streaming() for stream in streams), message="5 streams")
        assert open_stream_gauge(http) == 5

        refused = http.get(path)
        assert_error(refused, 429, "too_many_streams")
        assert int(refused.headers["retry-after"]) > 0
        assert "DOMINUS_MAX_STREAMS" in refused.json()["error"]["message"]
        assert open_stream_gauge(http) == 5  # the refused one took no slot

        # Clients that go away: the server notices (the poll is 250 ms; the connection's end
        # is seen at once) and the slots come back.
        for stream in streams:
            stream.close()
        wait_until(
            lambda: open_stream_gauge(http) == 0,
            timeout=5,
            interval=0.1,
            message="the closed streams' slots to be released",
        )
        [again] = open_streams(server, path, 1)
        wait_until(again.is_streaming, message="a new stream once slots were free")
        assert open_stream_gauge(http) == 1
