"""The domain pipeline end to end, through real `dominus` processes on one database (each test on
SQLite and on PostgreSQL, see tests/e2e/conftest.py):

- a worker SIGKILLed in the RDAP stage: the job is reclaimed and the second attempt resumes from
  the DNS checkpoint (the fake DNS servers are not asked again), real providers pointed at fake
  DNS and RDAP servers on loopback ports;
- the CLI (`dominus run`, `dominus runs ...`): exit codes, JSON documents, sample data labels,
  the trademark gate, a degraded run;
- the HTTP API (`dominus serve --with-worker`): start a run, follow its SSE stream to the end,
  read its job and candidates.
"""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from dominus.domain_names import keyword_domain
from dominus.jobs import JobStatus, SqlJobStore
from dominus.pipeline.model import STAGES
from dominus.pipeline.store import PipelineStore
from dominus.providers.offline import SAMPLE_DATA_DIR
from tests.support.api import assert_error, sse_events
from tests.support.fakes.dns_server import FakeDnsServer
from tests.support.fakes.rdap_server import FakeRdap, bootstrap_doc
from tests.support.polling import free_port
from tests.support.processes import DominusProcess, DominusProcesses, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.backends("sqlite", "postgresql")]

API = "/api/v1"
ALL_STAGES = [stage.value for stage in STAGES]

# Twenty keywords: twenty .com candidates, one of them a trademark ("nike").
KEYWORDS = [
    "solar panels",
    "dog training",
    "hiking boots",
    "vegan recipes",
    "garden tools",
    "electric bikes",
    "tax software",
    "meal prep",
    "standing desk",
    "password manager",
    "indoor plants",
    "tiny homes",
    "home gym",
    "coffee grinder",
    "yoga mats",
    "camping gear",
    "bird feeders",
    "rain barrels",
    "travel pillows",
    "nike shoes",
]
DOMAINS = [keyword_domain(keyword, "com").ascii for keyword in KEYWORDS]
MARKS_CSV = "mark,owner,registry,classes\nnike,Nike Inc.,USPTO,18;25;28\n"
# Names the bundled sample trademarks block: never recommended.
SAMPLE_BLOCKED = {
    "nikeshoes.com",
    "applestore.com",
    "applestoredeals.com",
    "teslabot.ai",
    "gooogle.com",
}
RDAP_DELAY_SECONDS = 0.3


# --- helpers -----------------------------------------------------------------------------------


def json_of(process: DominusProcess) -> Any:
    """The JSON document a `--json` command printed (fails with its output otherwise)."""
    try:
        return json.loads(process.stdout())
    except json.JSONDecodeError as error:
        raise AssertionError(f"not JSON ({error}):\n{process.describe()}") from None


def run_cli(
    procs: DominusProcesses,
    *args: str,
    expect: int = 0,
    env: dict[str, str] | None = None,
    timeout: float = 60,
) -> DominusProcess:
    """Run `dominus ARGS...` to completion, insisting on exit code `expect`."""
    process = procs.run(*args, timeout=timeout, check=False, env=env)
    assert process.returncode == expect, (
        f"`dominus {' '.join(args)}` exited {process.returncode}, expected {expect}:\n"
        + process.describe()
    )
    return process


def cli_json(procs: DominusProcesses, *args: str, env: dict[str, str] | None = None) -> Any:
    """The JSON document a one-shot `--json` command printed, run in this process (where its
    exit code, 0, is not the point)."""
    return procs.cli(*args, env=env).json()


def stages_checkpointed(runs: PipelineStore, run_id: int) -> set[str]:
    return {stage.value for stage in runs.checkpoints(run_id)}


def recommended_domains(document: dict[str, Any]) -> list[str]:
    return [candidate["domain"] for candidate in document["recommendations"]]


# --- 1. resume from the checkpoints after a killed worker --------------------------------------


@pytest.fixture
def rdap_server() -> Iterator[FakeRdap]:
    """An RDAP server answering 404 (no such domain, i.e. available) slowly."""
    server = FakeRdap(default=(404, {}, b"{}", RDAP_DELAY_SECONDS))
    yield server
    server.close()


@pytest.fixture
def real_providers_env(
    tmp_path: Path, dns_servers: list[FakeDnsServer], rdap_server: FakeRdap
) -> dict[str, str]:
    """Settings for real providers pointed at the loopback fakes, and a marks file."""
    bootstrap = tmp_path / "rdap_bootstrap.json"
    bootstrap.write_text(json.dumps(bootstrap_doc(rdap_server.base, ["com"])), encoding="utf-8")
    marks = tmp_path / "marks.csv"
    marks.write_text(MARKS_CSV, encoding="utf-8")
    return {
        "DOMINUS_PROVIDERS": "real",
        "DNS_RESOLVERS": ",".join(server.address for server in dns_servers),
        "DNS_TIMEOUT_MS": "2000",
        "RDAP_BOOTSTRAP_PATH": str(bootstrap),
        "RDAP_CONCURRENCY": "1",
        "RDAP_TIMEOUT_MS": "5000",
        "TRADEMARK_MARKS_PATH": str(marks),
        "KEYWORD_DATA_PATH": str(SAMPLE_DATA_DIR / "keywords.csv"),
        "COMPS_DATA_PATH": str(SAMPLE_DATA_DIR / "comps.csv"),
    }


def test_killed_worker_run_resumes_from_the_dns_checkpoint(
    dominus_procs: DominusProcesses,
    store: SqlJobStore,
    dns_servers: list[FakeDnsServer],
    rdap_server: FakeRdap,
    real_providers_env: dict[str, str],
) -> None:
    env = real_providers_env
    runs = PipelineStore(store.engine)
    created = cli_json(dominus_procs, "run", "-k", ",".join(KEYWORDS), "--json", env=env)
    run_id, job_id = created["run_id"], created["job_id"]
    assert created["status"] == "pending", created

    worker_env = env | {"JOB_MAX_RUNNING_AGE_MS": "3000", "JOB_HEARTBEAT_INTERVAL_MS": "500"}
    worker_a = dominus_procs.start("worker", "--concurrency", "1", env=worker_env, name="worker-a")
    a_id = worker_a.worker_id()

    def in_rdap_stage() -> bool:
        if not worker_a.is_running():
            raise AssertionError(f"worker A exited early:\n{worker_a.describe()}")
        return "dns" in stages_checkpointed(runs, run_id) and rdap_server.total_hits() >= 3

    wait_until(
        in_rdap_stage,
        30,
        message=lambda: (
            f"run {run_id} past DNS and into RDAP: checkpoints "
            f"{sorted(stages_checkpointed(runs, run_id))}, RDAP hits {rdap_server.total_hits()}"
        ),
    )
    worker_a.send(signal.SIGKILL)
    assert worker_a.wait_exit(10) == -signal.SIGKILL

    # Killed mid-RDAP: DNS is checkpointed, RDAP is not, the job still claimed by the dead worker.
    assert stages_checkpointed(runs, run_id) == {"generate", "dns"}, (
        "the worker was not killed inside the RDAP stage (it went too fast?)"
    )
    job = store.get_job(job_id)
    assert (job.status, job.locked_by, job.attempts) == (JobStatus.RUNNING, a_id, 1), job
    assert worker_a.job_lines("started") == [(job_id, "PIPELINE_RUN", 1)]
    dns_queries_at_kill = [list(server.queries) for server in dns_servers]
    for server, queries in zip(dns_servers, dns_queries_at_kill, strict=True):
        assert sorted(name for name, _ in queries) == sorted(DOMAINS), (server.address, queries)
    rdap_hits_at_kill = rdap_server.hits_snapshot()

    worker_b = dominus_procs.start("worker", "--concurrency", "1", env=worker_env, name="worker-b")
    assert worker_b.worker_id() != a_id
    document = cli_json(dominus_procs, "runs", "wait", str(run_id), "--timeout", "60", "--json")

    assert document["status"] == "completed", document
    assert document["degraded"] is False, document["degraded_reasons"]
    assert document["degraded_reasons"] == []
    assert [document["stages"][stage]["status"] for stage in ALL_STAGES] == ["completed"] * 5
    assert stages_checkpointed(runs, run_id) == set(ALL_STAGES)

    # DNS was not redone: not one more query reached either resolver.
    assert [server.queries for server in dns_servers] == dns_queries_at_kill
    # RDAP was finished by the second attempt: every name confirmed, asked after the kill.
    summary = document["summary"]
    assert summary["dns"] == {"available": 20, "registered": 0, "unknown": 0, "unchecked": 0}
    assert summary["rdap"] == {"available": 20, "registered": 0, "unknown": 0, "unchecked": 0}
    asked_after_kill = rdap_server.hits_snapshot() - rdap_hits_at_kill
    assert asked_after_kill, "the second attempt asked the RDAP server nothing"
    assert set(rdap_server.hits) == {f"/rdap/domain/{domain}" for domain in DOMAINS}

    # The trademark gate ran on the marks file: the Nike name is blocked, others recommended.
    assert summary["trademark"] == {"clear": 19, "blocked": 1}, summary
    recommended = recommended_domains(document)
    assert recommended, f"nothing recommended: {summary}"
    assert "nikeshoes.com" not in recommended

    # The job: reclaimed from worker A, completed by worker B on its second attempt.
    job = store.get_job(job_id)
    assert (job.status, job.attempts, job.locked_by) == (
        JobStatus.COMPLETED,
        2,
        worker_b.worker_id(),
    ), job
    assert job.failure_count == 1
    kinds = [event.kind.value for event in store.job_events(job_id)]
    assert kinds == ["reclaimed", "retry_scheduled"], kinds
    assert worker_b.job_lines("started") == [(job_id, "PIPELINE_RUN", 2)]
    assert worker_b.job_lines("completed") == [(job_id, "PIPELINE_RUN", 2)]
    resumed = re.search(rf"run {run_id}: resuming after (.*)", worker_b.stderr())
    assert resumed, worker_b.describe()
    assert sorted(resumed.group(1).split(", ")) == ["dns", "generate"], resumed.group(0)
    assert worker_b.stop() == 0


# --- 2. the CLI --------------------------------------------------------------------------------

OFFLINE = {"DOMINUS_PROVIDERS": "sample"}


def test_sample_sync_prints_sample_data_and_recommendations(
    dominus_procs: DominusProcesses,
) -> None:
    wide = OFFLINE | {"COLUMNS": "200"}  # the recommendations table in full, not truncated
    ran = dominus_procs.cli("run", "--sample", "--sync", env=wide)
    output = ran.stdout
    assert "SAMPLE DATA" in output, ran
    assert "run 1: completed" in output, ran
    assert "Recommended (by expected profit)" in output, ran
    assert "homegym.com" in output, ran  # a name the sample data recommends
    # The three tiers, apart: the speculative names in their own table, the rejected counted.
    assert "Speculative (name only, no market/keyword/expiry evidence" in output
    assert re.search(r"rejected \d+: .*trademark: blocked \d+", output), ran
    assert "stage 5/5 trademark" in ran.stderr, ran


def test_sample_wait_with_a_worker_and_the_runs_commands_agree(
    dominus_procs: DominusProcesses,
) -> None:
    worker = dominus_procs.start("worker", env=OFFLINE, name="worker")
    document = cli_json(dominus_procs, "run", "--sample", "--wait", "--timeout", "60", "--json")
    assert document["status"] == "completed", document
    assert document["degraded"] is False, document
    assert document["sample_data"] is True and document["providers"] == "sample", document
    recommended = recommended_domains(document)
    assert recommended, document["summary"]
    assert not SAMPLE_BLOCKED & set(recommended), recommended
    assert all(item["trademark"]["verdict"] == "clear" for item in document["recommendations"])
    run_id = document["run_id"]

    listed = cli_json(dominus_procs, "runs", "list", "--json")
    shown = cli_json(dominus_procs, "runs", "show", str(run_id), "--json")
    candidates = cli_json(dominus_procs, "runs", "candidates", str(run_id), "--json")

    assert [run["run_id"] for run in listed] == [run_id]
    without_candidates = {
        k: v for k, v in document.items() if k not in ("recommendations", "speculative")
    }
    assert shown == without_candidates
    assert listed[0] == {k: v for k, v in shown.items() if k != "input"}  # lists count inputs
    assert shown["input_summary"] == {"keywords": 15, "brandable": 10, "closeout": 9}
    assert len(candidates) == shown["summary"]["scored"]
    # `run --json` shows the first 20 recommendations; `runs candidates` lists them all.
    assert len(recommended) == min(20, shown["summary"]["recommended"])
    assert [c["domain"] for c in candidates if c["recommended"]][: len(recommended)] == recommended
    assert candidates[: len(recommended)] == document["recommendations"]
    blocked = {c["domain"] for c in candidates if c["trademark"]["verdict"] == "blocked"}
    assert blocked and blocked <= SAMPLE_BLOCKED, blocked
    assert [item["domain"] for item in shown["summary"]["top"]] == recommended[:10]
    # Recommendations by expected profit; the speculative ones apart, never among them.
    profits = [item["expected_profit"] for item in document["recommendations"]]
    assert profits == sorted(profits, reverse=True)
    assert {item["tier"] for item in document["speculative"]} == {"speculative"}
    assert not {item["domain"] for item in document["speculative"]} & set(recommended)
    tiers = shown["summary"]["tiers"]
    assert 0 < tiers["recommended"] < shown["summary"]["scored"] / 2, tiers

    job_id = document["job_id"]
    assert worker.job_lines("completed") == [(job_id, "PIPELINE_RUN", 1)]
    assert worker.stop() == 0


def test_cli_refuses_bad_input_and_times_out(dominus_procs: DominusProcesses) -> None:
    unknown = run_cli(dominus_procs, "runs", "wait", "999999", "--timeout", "1", expect=2)
    lines = unknown.stderr().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), unknown.describe()
    assert "999999" in lines[0], unknown.describe()

    empty = run_cli(dominus_procs, "run", expect=2, env=OFFLINE)
    assert "give at least one keyword, brandable name or closeout domain" in empty.stderr(), (
        empty.describe()
    )

    # Nobody works on this run's job: the timeout counts while the run still waits for a worker.
    # A wait that ignored it would never end (no worker runs here) and meet run_cli's own limit;
    # no tighter bound on the time, which a loaded machine's process start-up alone can exceed.
    created = json_of(run_cli(dominus_procs, "run", "-k", "solar panels", "--json", env=OFFLINE))
    waiting = run_cli(
        dominus_procs, "runs", "wait", str(created["run_id"]), "--timeout", "1", expect=124
    )
    assert "still pending after 1 s" in waiting.stderr(), waiting.describe()


@pytest.fixture
def silent_dns() -> Iterator[FakeDnsServer]:
    """A resolver on a loopback port that never answers."""
    server = FakeDnsServer({}, default="drop")
    yield server
    server.close()


def test_degraded_run_exits_1_and_says_why(
    dominus_procs: DominusProcesses, silent_dns: FakeDnsServer
) -> None:
    # With one lookup at a time, each timing out after 0.3 s, the 0.2 s DNS budget runs out
    # during the first one: the stage stops there, the lookup still in flight is dropped.
    env = {
        "DOMINUS_PROVIDERS": "real",
        "DNS_RESOLVERS": silent_dns.address,
        "DNS_TIMEOUT_MS": "300",
        "DNS_CONCURRENCY": "1",
        "PIPELINE_STAGE_BUDGET_BASE_MS": "200",
        "PIPELINE_STAGE_BUDGET_PER_CANDIDATE_MS": "0",
    }
    keywords = "solar panels,dog training,hiking boots"
    synced = run_cli(dominus_procs, "run", "-k", keywords, "--sync", "--json", expect=1, env=env)
    document = json_of(synced)
    run_id = document["run_id"]
    assert document["status"] == "completed", document
    assert document["degraded"] is True, document
    [reason] = document["degraded_reasons"]
    assert reason == "dns: time budget of 0.2 s exceeded (0 of 3 names checked)", reason
    assert document["stages"]["dns"]["status"] == "degraded"
    assert document["stages"]["dns"]["reason"] == reason
    assert document["summary"]["dns"]["unchecked"] == 3, document["summary"]
    assert document["recommendations"] == []  # nothing checked passes
    assert [name for name, _ in silent_dns.queries] == ["solarpanels.com"]

    shown = cli_json(dominus_procs, "runs", "show", str(run_id), "--json")
    assert (shown["degraded"], shown["degraded_reasons"]) == (True, [reason]), shown
    waited = run_cli(dominus_procs, "runs", "wait", str(run_id), "--timeout", "5", expect=1)
    assert "(DEGRADED)" in waited.stdout() and reason in waited.stdout(), waited.describe()


# --- 3. the HTTP API ---------------------------------------------------------------------------

# Enough names that the offline run takes a few stream polls, so its stages are seen going by.
API_KEYWORDS = [f"topic{index} ideas" for index in range(3000)]


def test_api_run_streamed_to_completion(dominus_procs: DominusProcesses) -> None:
    port = free_port()
    server = dominus_procs.start(
        "serve", "--with-worker", "--port", str(port), env=OFFLINE, name="serve"
    )
    base = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        if not server.is_running():
            raise AssertionError(f"dominus serve exited:\n{server.describe()}")
        try:
            return httpx.get(f"{base}{API}/health", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    wait_until(ready, 30, interval=0.1, message="dominus serve to answer /health")

    with httpx.Client(base_url=base, timeout=10) as http:
        response = http.post(f"{API}/runs", json={"keywords": API_KEYWORDS})
        assert response.status_code == 202, response.text
        created = response.json()
        run_id, job_id = created["run_id"], created["job_id"]
        assert response.headers["location"] == f"{API}/runs/{run_id}"
        assert created["status"] == "pending"
        assert created["_links"]["stream"] == f"{API}/runs/{run_id}/stream"

        events: list[tuple[str, Any]] = []
        with http.stream("GET", created["_links"]["stream"], timeout=60) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
            for name, data in sse_events(stream.iter_lines()):
                events.append((name, data))
                if name == "end":
                    break
        assert events and events[-1] == ("end", {"run_id": run_id, "status": "completed"}), events
        documents = [data for name, data in events if name == "run"]
        assert documents[-1]["status"] == "completed"
        assert [documents[-1]["stages"][stage]["status"] for stage in ALL_STAGES] == [
            "completed"
        ] * 5
        # Stage progress went by: the stages reported while the run was still going.
        seen: set[str] = set()
        for document in documents:
            if document["status"] != "running":
                continue
            seen |= set(document["stages"])
            if document["progress"] and "stage" in document["progress"]:
                seen.add(document["progress"]["stage"])
        assert len(seen) >= 2, [(d["status"], sorted(d["stages"])) for d in documents]

        # The run row is finished just before its job's completion commits.
        job = wait_until(
            lambda: (
                (found := http.get(f"{API}/runs/{run_id}/job")).json()["status"] == "completed"
                and found
            ),
            10,
            message="the run's job to complete",
        )
        assert job.status_code == 200, job.text
        assert (job.json()["id"], job.json()["type"], job.json()["status"]) == (
            job_id,
            "PIPELINE_RUN",
            "completed",
        ), job.json()

        candidates = http.get(f"{API}/runs/{run_id}/candidates", params={"limit": 50})
        assert candidates.status_code == 200, candidates.text
        assert candidates.json(), "no candidates"
        recommended = http.get(f"{API}/runs/{run_id}/candidates", params={"recommended": "true"})
        assert all(c["recommended"] for c in recommended.json()), recommended.json()

        assert_error(http.post(f"{API}/runs", json={}), 400, "no_input")
        assert_error(http.get(f"{API}/runs/999999"), 404, "not_found")

    assert server.stop(timeout=20) == 0, server.describe()
