"""Ordinary API requests while many Server-Sent Event streams are open (ADR 0009).

    .venv/bin/python bench/sse_streams.py [--backend sqlite|postgresql|both] [--streams 0,50,200]
        [--requests 200] [--read-threads N] [--pg-url URL] [--output bench/RESULTS.md]

A real `dominus serve` (uvicorn, one process, its default pool of 40 threads, no worker) on a
fresh database: SQLite in a temporary directory, PostgreSQL a throwaway database on the server,
dropped afterwards. For each number of streams N, N clients each follow their own pending job
(`GET /api/v1/jobs/{id}/stream`, a raw socket each; nobody runs the jobs, so the streams stay
open and poll the database every 250 ms). Once every stream has sent its first event and the
server has sat 3 s with them (its CPU is measured over those seconds), `--requests` sequential
`GET /api/v1/health` and then as many `GET /api/v1/jobs?limit=1` are timed on one keep-alive
connection (median, p95, p99). Then every followed job is cancelled, one request at a time, and
the delay from each cancel's answer to its stream's `end` event is taken: how fresh streams stay
at that load. Last the clients close their sockets and the server's `dominus_api_open_streams`
gauge must drop back to 0 (the time it takes is printed).

`--read-threads N` starts the server with N threads for stream reads instead of the built-in
STREAM_READ_THREADS (the same `dominus serve`, with that one constant replaced), to compare.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

import envinfo
from dominus.api import services, stream_limits
from dominus.api.stream_limits import STREAM_READ_THREADS
from dominus.cli.main import main as dominus_main
from dominus.db.engine import create_database_engine
from dominus.schema.migrate import upgrade
from pg import DEFAULT_URL, PgServer

API = "/api/v1"
MAX_STREAMS = 1000  # DOMINUS_MAX_STREAMS for the run: above every N measured
IDLE_SECONDS = 3.0


# --- the server ------------------------------------------------------------------------------


def serve_with_read_threads(threads: int, argv: list[str]) -> None:
    """`dominus serve ARGV` with `threads` stream-read threads (run in the server subprocess)."""

    class Limits(stream_limits.StreamLimits):
        def __init__(self, max_streams: int, read_threads: int = threads) -> None:
            super().__init__(max_streams, read_threads)

    services.StreamLimits = Limits  # type: ignore[misc]
    sys.argv = ["dominus", "serve", *argv]
    dominus_main()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise SystemExit(
                f"the server did not stop within 30 s after SIGTERM; see {self.log}"
            ) from None


def start_server(database_url: str, read_threads: int | None, log: Path) -> Server:
    port = free_port()
    argv = ["--port", str(port), "--diagnostic-jobs"]
    if read_threads is None:
        command = [str(Path(sys.executable).parent / "dominus"), "serve", *argv]
    else:
        code = (
            "import sys; sys.path.insert(0, sys.argv[1]); import sse_streams; "
            "sse_streams.serve_with_read_threads(int(sys.argv[2]), sys.argv[3:])"
        )
        here = str(Path(__file__).resolve().parent)
        command = [sys.executable, "-c", code, here, str(read_threads), *argv]
    env = {name: value for name, value in os.environ.items() if not name.startswith("DOMINUS_")}
    env |= {
        "DATABASE_URL": database_url,
        "DOMINUS_LOG_LEVEL": "WARNING",  # no access log line per request
        "DOMINUS_MAX_STREAMS": str(MAX_STREAMS),
    }
    with log.open("wb") as output:
        process = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, env=env, cwd=log.parent
        )
    server = Server(process, port, log)
    deadline = time.monotonic() + 30
    while True:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with {process.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(f"{server.base_url}{API}/health", timeout=1).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise SystemExit(f"the server did not start:\n{log.read_text()}")
        time.sleep(0.1)


# --- the streams -----------------------------------------------------------------------------


@dataclass
class Stream:
    """One client following one job over a raw HTTP/1.1 connection."""

    job_id: int
    first_event: asyncio.Event = field(default_factory=asyncio.Event)
    ended_at: float | None = None
    writer: asyncio.StreamWriter | None = None
    task: asyncio.Task[None] | None = None

    async def open(self, port: int) -> None:
        reader, self.writer = await asyncio.open_connection("127.0.0.1", port)
        self.writer.write(
            f"GET {API}/jobs/{self.job_id}/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Accept: text/event-stream\r\n\r\n".encode()
        )
        self.task = asyncio.create_task(self._read(reader))

    async def _read(self, reader: asyncio.StreamReader) -> None:
        while line := await reader.readline():
            if line.startswith(b"event: job"):
                self.first_event.set()
            elif line.startswith(b"event: end"):
                self.ended_at = time.perf_counter()
                return
            elif line.startswith(b"HTTP/1.1 ") and not line.startswith(b"HTTP/1.1 200"):
                raise SystemExit(f"stream of job {self.job_id} refused: {line.decode().strip()}")

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        if self.task is not None:
            self.task.cancel()


# --- measuring -------------------------------------------------------------------------------


def percentiles(values: list[float]) -> tuple[float, float, float]:
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return statistics.median(values), cuts[94], cuts[98]


async def timed_gets(http: httpx.AsyncClient, path: str, count: int) -> list[float]:
    milliseconds = []
    for _ in range(count):
        started = time.perf_counter()
        response = await http.get(path)
        milliseconds.append(1000 * (time.perf_counter() - started))
        if response.status_code != 200:
            raise SystemExit(f"GET {path}: {response.status_code} {response.text}")
    return milliseconds


async def open_gauge(http: httpx.AsyncClient) -> float:
    text = (await http.get(f"{API}/metrics")).text
    found = re.search(r"^dominus_api_open_streams (\S+)$", text, re.MULTILINE)
    if found is None:
        raise SystemExit("the server reports no dominus_api_open_streams gauge")
    return float(found.group(1))


@dataclass
class Figures:
    streams: int
    health: tuple[float, float, float]
    jobs: tuple[float, float, float]
    server_cpu_percent: float
    event_delay: tuple[float, float, float] | None  # median, p95, max (ms)
    released_seconds: float | None


async def measure(server: Server, streams: int, requests: int) -> Figures:
    limits = httpx.Limits(max_connections=1)
    async with httpx.AsyncClient(base_url=server.base_url, limits=limits, timeout=60) as http:
        job_ids = []
        for _ in range(streams):
            response = await http.post(f"{API}/jobs", json={"type": "diag.noop"})
            job_ids.append(response.json()["id"])
        clients = [Stream(job_id) for job_id in job_ids]
        for client in clients:
            await client.open(server.port)
        await asyncio.wait_for(
            asyncio.gather(*(client.first_event.wait() for client in clients)), 60
        )
        cpu_before = server.cpu_seconds()
        await asyncio.sleep(IDLE_SECONDS)
        cpu_percent = 100 * (server.cpu_seconds() - cpu_before) / IDLE_SECONDS
        health = await timed_gets(http, f"{API}/health", requests)
        jobs = await timed_gets(http, f"{API}/jobs?limit=1", requests)
        delay = await cancel_and_time_events(http, clients)
        released = await close_and_time_release(http, clients)
    return Figures(streams, percentiles(health), percentiles(jobs), cpu_percent, delay, released)


async def cancel_and_time_events(
    http: httpx.AsyncClient, clients: list[Stream]
) -> tuple[float, float, float] | None:
    """Cancel each followed job; the delay from the cancel's answer to the stream's `end`."""
    if not clients:
        return None
    answered = {}
    for client in clients:
        response = await http.post(f"{API}/jobs/{client.job_id}/cancel")
        answered[client.job_id] = time.perf_counter()
        if response.status_code != 200:
            raise SystemExit(f"cancel {client.job_id}: {response.status_code} {response.text}")
    await asyncio.wait_for(
        asyncio.gather(*(client.task for client in clients if client.task is not None)), 60
    )
    delays = [
        1000 * max(0.0, (client.ended_at or 0.0) - answered[client.job_id]) for client in clients
    ]
    return statistics.median(delays), percentiles(delays)[1], max(delays)


async def close_and_time_release(http: httpx.AsyncClient, clients: list[Stream]) -> float | None:
    """Time until the server's open-stream gauge is back to 0 after the clients went away.
    (Every stream has already sent `end` here, so this is a check, not the disconnect path;
    `measure_disconnect` below times that.)"""
    for client in clients:
        client.close()
    started = time.perf_counter()
    while await open_gauge(http) != 0:
        if time.perf_counter() - started > 30:
            raise SystemExit("open streams were not released within 30 s")
        await asyncio.sleep(0.01)
    return time.perf_counter() - started if clients else None


async def measure_disconnect(server: Server, streams: int) -> float:
    """Open `streams` streams on pending jobs, close every client, and time until the server's
    gauge says none is open: how quickly clients that went away are noticed."""
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as http:
        clients = []
        for _ in range(streams):
            response = await http.post(f"{API}/jobs", json={"type": "diag.noop"})
            clients.append(Stream(response.json()["id"]))
        for client in clients:
            await client.open(server.port)
        await asyncio.wait_for(
            asyncio.gather(*(client.first_event.wait() for client in clients)), 60
        )
        return await close_and_time_release(http, clients) or 0.0


# --- one backend -----------------------------------------------------------------------------


@dataclass
class BackendResult:
    backend: str
    figures: list[Figures]
    disconnect_seconds: float
    server: str | None = None


def run_backend(
    backend: str, args: argparse.Namespace, pg: PgServer | None, workdir: Path
) -> BackendResult:
    if backend == "sqlite":
        url = f"sqlite:///{workdir}/sse.db"
    else:
        assert pg is not None
        url = pg.sqlalchemy_url(pg.create("sse"))
    engine = create_database_engine(url)
    upgrade(engine)
    engine.dispose()
    server = start_server(url, args.read_threads, workdir / f"serve-{backend}.log")
    try:
        figures = []
        for streams in args.streams:
            figures.append(asyncio.run(measure(server, streams, args.requests)))
            print(f"{backend}: {streams} streams: {describe(figures[-1])}", flush=True)
        disconnect = asyncio.run(measure_disconnect(server, max(args.streams)))
        print(f"{backend}: {max(args.streams)} clients gone, released in {disconnect:.2f} s")
    finally:
        server.stop()
    return BackendResult(backend, figures, disconnect)


def describe(figures: Figures) -> str:
    health = " / ".join(f"{value:.1f}" for value in figures.health)
    jobs = " / ".join(f"{value:.1f}" for value in figures.jobs)
    return f"GET /health {health} ms, GET /jobs?limit=1 {jobs} ms (p50 / p95 / p99)"


# --- the report ------------------------------------------------------------------------------


def render(
    args: argparse.Namespace, results: list[BackendResult], pg_description: str | None
) -> str:
    unrelated = {"huey", "procrastinate", "pgqueuer"}  # the queue benchmarks' comparisons
    machine = [
        (key, value)
        for key, value in envinfo.describe(postgresql=pg_description)
        if key not in unrelated
    ]
    threads = args.read_threads or STREAM_READ_THREADS
    lines = [
        f"## {machine[0][1]} — SSE streams: ordinary requests while streams are open",
        "",
        *(f"- {key}: {value}" for key, value in machine),
        f"- server: `dominus serve` (uvicorn, one process, 40-thread default pool), no worker; "
        f"DOMINUS_MAX_STREAMS={MAX_STREAMS}, {threads} stream-read threads, polls every 250 ms",
        f"- {args.requests} sequential requests per figure on one keep-alive connection",
        "",
    ]
    for result in results:
        lines += [
            f"### {result.backend}",
            "",
            "| open streams | GET /health p50 / p95 / p99 (ms) | GET /jobs?limit=1 p50 / p95 / "
            "p99 (ms) | server CPU, streams idle (% of a core) | change → stream event "
            "p50 / p95 / max (ms) |",
            "|---:|---:|---:|---:|---:|",
        ]
        for figures in result.figures:
            delay = (
                " / ".join(f"{value:.0f}" for value in figures.event_delay)
                if figures.event_delay
                else "—"
            )
            lines.append(
                f"| {figures.streams} | {' / '.join(f'{v:.1f}' for v in figures.health)} | "
                f"{' / '.join(f'{v:.1f}' for v in figures.jobs)} | "
                f"{figures.server_cpu_percent:.0f} | {delay} |"
            )
        lines += [
            "",
            f"{max(args.streams)} clients that went away at once: the server's open-stream "
            f"gauge was back at 0 after {result.disconnect_seconds:.2f} s.",
            "",
        ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument(
        "--streams",
        type=lambda text: [int(part) for part in text.split(",")],
        default=[0, 50, 200],
        help="numbers of open streams, comma-separated (default 0,50,200)",
    )
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--read-threads", type=int, default=None)
    parser.add_argument("--pg-url", default=os.environ.get("BENCH_PG_URL", DEFAULT_URL))
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    if max(args.streams) > MAX_STREAMS:
        parser.error(f"--streams: at most {MAX_STREAMS}")
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    pg = PgServer(args.pg_url) if "postgresql" in backends else None
    results = []
    try:
        with tempfile.TemporaryDirectory(prefix="dominus-sse-") as directory:
            for backend in backends:
                results.append(run_backend(backend, args, pg, Path(directory)))
        pg_description = f"{pg.version()}; {pg.settings()}" if pg else None
    finally:
        if pg is not None:
            pg.drop_all()
    report = render(args, results, pg_description)
    print(report)
    if args.output:
        with args.output.open("a", encoding="utf-8") as output:
            output.write("\n" + report)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
