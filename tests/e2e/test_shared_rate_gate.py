"""The RDAP rate gate shared by real `dominus worker` processes: three workers on one database
poll a watchlist and run two pipelines at once, every lookup going to one loopback RDAP server
that allows 5 requests a second and answers 429 with Retry-After: 3 beyond that.

Everything is judged by the server's own record of when each request arrived, never by timing
the clients:
- with PROVIDER_RATE_LIMITS at the server's 5/s, no 1-second window (sliding, over every
  arrival) holds more than 5 requests;
- with the gate set above the server's rate (10/s), 429s do come, and after each one nothing
  arrives from any process until its Retry-After has run out;
- either way every lookup ends with the registry's answer (no "stopped", no UNKNOWN) and every
  job completes.

Each test runs on one database, because each takes a minute (300 names at 5 a second is 60 s by
itself): the rate on PostgreSQL, the database of many workers on many hosts; the 429 pauses on
SQLite. Both ran on both databases when they were written (ADR 0056 has the figures), and the
limiters under them are held on both databases by tests/contract/test_rate_limits.py and
test_shared_rate_gate.py.

Requests already on the wire when a 429 is sent cannot be called back: an arrival up to
ON_THE_WIRE_SECONDS after a 429 is allowed (the other processes learn of the pause through the
database only once the refused client has written it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from dominus.config import load_settings
from dominus.domain_names import keyword_domain
from dominus.handlers.watchlist_poll import WATCHLIST_POLL
from dominus.jobs import JobStatus, SqlJobStore
from dominus.pipeline.model import RunInput, RunStatus
from dominus.pipeline.service import PipelineService
from dominus.pipeline.store import PipelineStore
from dominus.providers.offline import SAMPLE_DATA_DIR
from dominus.runtime import build_runtime
from dominus.watchlist.store import WatchlistStore
from tests.support.fakes.dns_server import FakeDnsServer
from tests.support.fakes.rdap_server import FakeRdap, bootstrap_doc
from tests.support.processes import DominusProcess, DominusProcesses, database_clock, wait_until

pytestmark = pytest.mark.slow

SERVER_LIMIT = 5  # requests in any second, as the loopback server enforces it
RETRY_AFTER_SECONDS = 3
# An arrival this soon after a 429 was already on its way when the 429 was sent.
ON_THE_WIRE_SECONDS = 0.2
# The server answers each lookup after this long: a registry is never instant.
ANSWER_DELAY_SECONDS = 0.02
WORKERS = 3
PIPELINE_RUNS = 2
# Ten minutes: the pipeline's stages must not run out of time waiting at the gate.
STAGE_BUDGET_MS = "600000"


@dataclass(frozen=True)
class Load:
    """What the three workers are given: the gate's rate for the server, the watchlist's size,
    the candidates of each pipeline run, the attempts a lookup may make."""

    gate_rate: str
    watched: int
    candidates_per_run: int
    max_attempts: int

    def watched_names(self) -> list[str]:
        return [f"watched{number}.com" for number in range(self.watched)]

    def keywords(self, run: int) -> list[str]:
        return [f"run{run} keyword{number}" for number in range(self.candidates_per_run)]

    def run_names(self, run: int) -> list[str]:
        return [keyword_domain(keyword, "com").ascii for keyword in self.keywords(run)]


@dataclass(frozen=True)
class Submitted:
    watch_job: int
    runs: dict[int, int]  # run id → its PIPELINE_RUN job id

    def job_ids(self) -> list[int]:
        return [self.watch_job, *self.runs.values()]


@pytest.fixture
def rdap_server() -> Iterator[FakeRdap]:
    server = FakeRdap(
        default=(404, {}, b"{}", ANSWER_DELAY_SECONDS),
        rate_limit=(SERVER_LIMIT, 1.0),
        retry_after=str(RETRY_AFTER_SECONDS),
    )
    yield server
    server.close()


@pytest.fixture
def providers_env(
    tmp_path: Path, e2e_env: dict[str, str], rdap_server: FakeRdap, dns_servers: list[FakeDnsServer]
) -> dict[str, str]:
    """Real providers: `.com` sent to the loopback RDAP server by the bootstrap file, the DNS
    resolvers on loopback, the pipeline's data from the sample files."""
    bootstrap = tmp_path / "rdap_bootstrap.json"
    bootstrap.write_text(json.dumps(bootstrap_doc(rdap_server.base, ["com"])), encoding="utf-8")
    return e2e_env | {
        "DOMINUS_PROVIDERS": "real",
        "DNS_RESOLVERS": ",".join(server.address for server in dns_servers),
        "DNS_TIMEOUT_MS": "2000",
        "RDAP_BOOTSTRAP_PATH": str(bootstrap),
        "RDAP_CONCURRENCY": "2",
        "RDAP_TIMEOUT_MS": "5000",
        "KEYWORD_DATA_PATH": str(SAMPLE_DATA_DIR / "keywords.csv"),
        "COMPS_DATA_PATH": str(SAMPLE_DATA_DIR / "comps.csv"),
        "PIPELINE_STAGE_BUDGET_BASE_MS": STAGE_BUDGET_MS,
        "WATCHLIST_RDAP_DELAY_MS": "0",  # the gate alone paces the poll
        # One job per worker; a generous running age so a starved (but alive) worker on this
        # busy machine keeps its job: reclaiming is not what is tested here.
        "WORKER_CONCURRENCY": "1",
        "JOB_HEARTBEAT_INTERVAL_MS": "1000",
        "JOB_MAX_RUNNING_AGE_MS": "20000",
    }


def run_load(
    procs: DominusProcesses, store: SqlJobStore, env: dict[str, str], load: Load
) -> list[DominusProcess]:
    """Start three workers, give them the watchlist poll and the pipeline runs, and wait until
    every job has completed, each on a worker of its own."""
    env = env | {
        "PROVIDER_RATE_LIMITS": f"127.0.0.1={load.gate_rate}",
        "RDAP_MAX_ATTEMPTS": str(load.max_attempts),
    }
    watchlist = WatchlistStore(store.engine)
    now = database_clock(store)()
    for domain in load.watched_names():
        watchlist.add(domain, None, now)
    workers = [procs.start("worker", env=env, name=f"worker-{n}") for n in range(WORKERS)]
    worker_ids = {worker.worker_id() for worker in workers}
    assert len(worker_ids) == WORKERS
    submitted = submit(env, load)

    def all_completed() -> bool:
        jobs = [store.get_job(job_id) for job_id in submitted.job_ids()]
        ended = [job for job in jobs if job.status in (JobStatus.FAILED, JobStatus.CANCELLED)]
        if ended or not all(worker.is_running() for worker in workers):
            raise AssertionError(f"a job failed or a worker exited: {ended}")
        return all(job.status is JobStatus.COMPLETED for job in jobs)

    wait_until(all_completed, 300, interval=0.5, message="the poll and the runs to complete")
    # Each job ran on a worker of its own: three processes asked the server side by side.
    locked_by = {store.get_job(job_id).locked_by for job_id in submitted.job_ids()}
    assert locked_by == worker_ids, (locked_by, worker_ids)
    assert_every_lookup_answered(store, submitted, load)
    return workers


def submit(env: dict[str, str], load: Load) -> Submitted:
    """The WATCHLIST_POLL job and the pipeline runs (each with its PIPELINE_RUN job), enqueued
    from this process."""
    runtime = build_runtime(load_settings(**env))
    try:
        queue = runtime.queue()
        service = PipelineService(
            runtime.settings, PipelineStore(runtime.engine), queue, runtime.clock
        )
        runs = [
            service.submit(RunInput(keywords=load.keywords(run))) for run in range(PIPELINE_RUNS)
        ]
        watch_job = queue.enqueue_job(WATCHLIST_POLL, {}).job_id
    finally:
        runtime.engine.dispose()
    return Submitted(watch_job, {run.id: run.job_id for run in runs if run.job_id is not None})


def assert_every_lookup_answered(store: SqlJobStore, submitted: Submitted, load: Load) -> None:
    """Every watched name and every candidate had the registry's answer ("available": the
    server knows no domain), none was left "stopped" or unknown by a wait at the gate."""
    poll = store.get_job(submitted.watch_job).result
    assert poll is not None
    assert (poll["checked"], poll["available"], poll["errors"]) == (load.watched, load.watched, [])
    statuses = {entry.domain: entry.last_status for entry in WatchlistStore(store.engine).entries()}
    assert statuses == dict.fromkeys(load.watched_names(), "available")
    runs = PipelineStore(store.engine)
    assert len(submitted.runs) == PIPELINE_RUNS
    for run_id in submitted.runs:
        run = runs.get_run(run_id)
        assert run.status is RunStatus.COMPLETED, run
        assert run.summary is not None
        assert run.summary["rdap"] == {
            "available": load.candidates_per_run,
            "registered": 0,
            "unknown": 0,
            "unchecked": 0,
        }, run.summary


def arrivals_during_pauses(server: FakeRdap) -> list[tuple[float, float]]:
    """(429, arrival) pairs: a request that came later than ON_THE_WIRE_SECONDS after a 429 and
    before the 429's Retry-After ran out."""
    return [
        (refused, arrived)
        for refused in server.refusals
        for arrived in server.arrivals
        if refused + ON_THE_WIRE_SECONDS < arrived < refused + RETRY_AFTER_SECONDS
    ]


def assert_server_saw_every_name(server: FakeRdap, load: Load) -> None:
    """Every name had an answer other than a 429, and the three jobs asked side by side: there
    was a moment when each had sent its first request and none its last."""
    jobs = [load.watched_names(), *(load.run_names(run) for run in range(PIPELINE_RUNS))]
    paths = [{f"/rdap/domain/{name}" for name in names} for names in jobs]
    assert server.answered_paths() == set().union(*paths)
    order = server.arrival_paths
    spans = [[index for index, path in enumerate(order) if path in job] for job in paths]
    assert max(span[0] for span in spans) < min(span[-1] for span in spans), (
        "the jobs asked the server one after another, not together"
    )


@pytest.mark.backends("postgresql")
@pytest.mark.timeout(300)  # 380 lookups at 5 a second, three worker processes on a busy machine
def test_three_workers_at_the_servers_rate_stay_under_it(
    dominus_procs: DominusProcesses,
    store: SqlJobStore,
    providers_env: dict[str, str],
    rdap_server: FakeRdap,
) -> None:
    """Gate and server both at 5/s: 300 watched names and 2 × 40 candidates from three processes,
    never more than 5 requests in a second at the server. Each run has 40 lookups (16 s or more
    at its share of the rate), so the three jobs still ask side by side when a loaded machine
    starts one of them seconds after the others."""
    load = Load(gate_rate=f"{SERVER_LIMIT}/s", watched=300, candidates_per_run=40, max_attempts=3)
    workers = run_load(dominus_procs, store, providers_env, load)

    assert rdap_server.most_in_any_window(1.0) <= SERVER_LIMIT
    assert arrivals_during_pauses(rdap_server) == []
    assert_server_saw_every_name(rdap_server, load)
    assert all(worker.stop() == 0 for worker in workers)


@pytest.mark.backends("sqlite")
def test_a_gate_above_the_servers_rate_pauses_every_process_on_a_429(
    dominus_procs: DominusProcesses,
    store: SqlJobStore,
    providers_env: dict[str, str],
    rdap_server: FakeRdap,
) -> None:
    """Gate at 10/s, server at 5/s: 429s come, and each one holds all three processes for its
    Retry-After; every lookup still ends with an answer (a refused attempt is tried again after
    the pause)."""
    load = Load(
        gate_rate=f"{2 * SERVER_LIMIT}/s", watched=60, candidates_per_run=10, max_attempts=10
    )
    workers = run_load(dominus_procs, store, providers_env, load)

    assert rdap_server.refusals, "the server never answered 429: the test proves nothing"
    assert arrivals_during_pauses(rdap_server) == []
    assert_server_saw_every_name(rdap_server, load)
    assert all(worker.stop() == 0 for worker in workers)
