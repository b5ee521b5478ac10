"""Input limits of the API on SQLite and PostgreSQL: JSON nested too deep is a 422 before
anything parses it (it was a plain-text 500, or a vague 400 once Python's parser overflowed); a
body over DOMINUS_MAX_BODY_BYTES is a 413 (a 90 MB run was accepted); list pages summarise runs
and jobs instead of echoing their inputs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator

import pytest
from fastapi.testclient import TestClient
from starlette.types import Message, Receive, Scope, Send

from dominus.api.limits import RequestLimitsMiddleware
from dominus.config import load_settings
from dominus.errors import ConfigurationError
from dominus.pipeline.store import PipelineStore
from tests.support.api import API, TOKEN, assert_error, enqueue, runtime_of
from tests.support.serving import ServeProcess, serve_env

pytestmark = pytest.mark.backends("sqlite", "postgresql")


JSON = {"content-type": "application/json"}


def deep_arrays(depth: int) -> str:
    return "[" * depth + "]" * depth


def deep_objects(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


@pytest.mark.parametrize("depth", [64, 500, 1_000, 100_000])
@pytest.mark.parametrize("shape", [deep_arrays, deep_objects], ids=["arrays", "objects"])
def test_a_deeply_nested_job_payload_is_a_422(
    client: TestClient, backend: str, depth: int, shape: Callable[[int], str]
) -> None:
    # With the body's own object around it, a payload 64 deep is 65 deep: one too many.
    body = '{"type": "diag.noop", "payload": {"a": ' + shape(depth - 1) + "}}"
    response = client.post(f"{API}/jobs", content=body, headers=JSON)
    error = assert_error(response, 422, "invalid_request")
    assert error["message"] == "the request body is nested more than 64 levels deep"
    assert runtime_of(client).store.list_jobs() == []


def test_a_deeply_nested_run_body_is_a_422(client: TestClient, backend: str) -> None:
    body = '{"keywords": ["a"], "closeoutDomains": ' + deep_arrays(100_000) + "}"
    response = client.post(f"{API}/runs", content=body, headers=JSON)
    assert_error(response, 422, "invalid_request")


def test_nesting_within_the_limit_reaches_validation(client: TestClient, backend: str) -> None:
    body = '{"type": "diag.noop", "payload": {"a": ' + deep_arrays(60) + "}}"
    response = client.post(f"{API}/jobs", content=body, headers=JSON)
    assert_error(response, 422, "invalid_payload")  # diag.noop takes no field `a`
    brackets_in_a_string = {"message": "[{" * 5_000}
    assert enqueue(client, "diag.fail", payload=brackets_in_a_string)["payload"] == {
        "fail_times": 1,
        "message": "[{" * 5_000,
    }


def test_the_token_is_checked_before_the_body_is_read(
    make_client: Callable[..., TestClient], backend: str
) -> None:
    client = make_client(DOMINUS_API_TOKEN=TOKEN)
    body = '{"type": "diag.noop", "payload": ' + deep_arrays(1_000) + "}"
    assert_error(client.post(f"{API}/jobs", content=body, headers=JSON), 401, "unauthorized")
    authed = JSON | {"Authorization": f"Bearer {TOKEN}"}
    assert_error(client.post(f"{API}/jobs", content=body, headers=authed), 422)


# --- body size ---------------------------------------------------------------------------------


def test_a_body_over_the_limit_is_a_413_and_creates_nothing(
    make_client: Callable[..., TestClient], backend: str
) -> None:
    client = make_client(DOMINUS_PROVIDERS="sample")
    names = [f"name{index:07d}" for index in range(60_000)]  # 15 bytes each: ~0.9 MB
    accepted = client.post(f"{API}/runs", json={"keywords": names})
    assert accepted.status_code == 202, accepted.text
    body = json.dumps({"keywords": names, "brandableNames": names[:10_000]})
    assert len(body) > 1_048_576
    response = client.post(f"{API}/runs", content=body, headers=JSON)
    error = assert_error(response, 413, "payload_too_large")
    assert error["message"] == (
        "the request body is over the limit of 1,048,576 bytes (DOMINUS_MAX_BODY_BYTES)"
    )
    assert [run.id for run in PipelineStore(runtime_of(client).engine).list_runs()] == [
        accepted.json()["run_id"]
    ]


def test_the_limit_is_a_setting(make_client: Callable[..., TestClient], backend: str) -> None:
    client = make_client(DOMINUS_MAX_BODY_BYTES=2048)
    small = {"type": "diag.fail", "payload": {"message": "x" * 1900}}
    assert client.post(f"{API}/jobs", json=small).status_code == 202
    big = {"type": "diag.fail", "payload": {"message": "x" * 2100}}
    assert_error(client.post(f"{API}/jobs", json=big), 413, "payload_too_large")
    assert len(runtime_of(client).store.list_jobs()) == 1


@pytest.mark.parametrize("value", [0, 1023, 67_108_865])
def test_the_limit_has_an_allowed_range(value: int) -> None:
    with pytest.raises(ConfigurationError, match=r"DOMINUS_MAX_BODY_BYTES.*1024\.\.67108864"):
        load_settings(_env_file=None, DOMINUS_MAX_BODY_BYTES=value)


class Chunks:
    """An ASGI `receive` sending `chunk` after `chunk` of a body that never ends."""

    def __init__(self, chunk: bytes) -> None:
        self.chunk = chunk
        self.pulled = 0

    async def __call__(self) -> Message:
        self.pulled += 1
        return {"type": "http.request", "body": self.chunk, "more_body": True}


def call_middleware(limit: int, receive: Receive, headers: list[tuple[bytes, bytes]]) -> Message:
    """Run the limits middleware around an app that must not be reached; the response start."""

    async def unreachable(_scope: Scope, _receive: Receive, _send: Send) -> None:
        raise AssertionError("the app was called")

    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    scope: Scope = {"type": "http", "method": "POST", "path": "/api/v1/runs", "headers": headers}
    middleware = RequestLimitsMiddleware(unreachable, max_body_bytes=limit)
    asyncio.run(middleware(scope, receive, send))
    assert json.loads(sent[1]["body"])["error"]["code"] == "payload_too_large"
    return sent[0]


def test_a_chunked_body_is_cut_off_as_soon_as_it_passes_the_limit() -> None:
    body = Chunks(b"x" * 65_536)
    start = call_middleware(1_048_576, body, [(b"content-type", b"application/json")])
    assert start["status"] == 413
    assert body.pulled == 17  # 16 chunks are exactly the limit; the 17th passes it


def test_a_declared_length_over_the_limit_is_refused_before_reading() -> None:
    body = Chunks(b"x")
    start = call_middleware(1_048_576, body, [(b"content-length", b"1048577")])
    assert start["status"] == 413
    assert body.pulled == 0


@pytest.mark.slow
def test_a_real_server_refuses_both_kinds_of_big_body(
    backend: str, database_url: str, serve_processes: Callable[..., ServeProcess]
) -> None:
    server = serve_processes(
        "--diagnostic-jobs", env=serve_env(database_url, DOMINUS_MAX_BODY_BYTES="65536")
    )
    server.wait_ready()
    big = {"type": "diag.fail", "payload": {"message": "x" * 70_000}}
    encoded = json.dumps(big).encode()

    def chunked() -> Iterator[bytes]:
        for start in range(0, len(encoded), 8192):
            yield encoded[start : start + 8192]

    with server.http() as http:
        declared = http.post(f"{API}/jobs", content=encoded, headers=JSON)
        assert_error(declared, 413, "payload_too_large")
        streamed = http.post(f"{API}/jobs", content=chunked(), headers=JSON)
        assert "content-length" not in streamed.request.headers
        assert_error(streamed, 413, "payload_too_large")
        small = {"type": "diag.noop"}
        assert http.post(f"{API}/jobs", json=small).status_code == 202
        assert http.get(f"{API}/health").status_code == 200


# --- list pages summarise --------------------------------------------------------------------


def test_run_listings_count_inputs_instead_of_echoing_them(
    make_client: Callable[..., TestClient], backend: str
) -> None:
    client = make_client(DOMINUS_PROVIDERS="sample")
    body = {
        "keywords": [f"keyword{index}" for index in range(3_000)],
        "brandableNames": ["zentrova"],
        "closeoutDomains": ["a.com", {"domain": "b.com", "age": 3}],
    }
    run_id = client.post(f"{API}/runs", json=body).json()["run_id"]
    [item] = client.get(f"{API}/runs").json()["items"]
    assert "input" not in item
    assert item["input_summary"] == {"keywords": 3_000, "brandable": 1, "closeout": 2}
    assert item["run_id"] == run_id
    run = client.get(f"{API}/runs/{run_id}").json()
    assert len(run["input"]["keywords"]) == 3_000
    assert run["input_summary"] == item["input_summary"]
    assert {key: value for key, value in run.items() if key != "input"} == item


def test_a_run_takes_at_most_100000_names_in_all(client: TestClient, backend: str) -> None:
    names = ["a"] * 50_000
    body = {"keywords": names, "brandableNames": names, "closeoutDomains": ["b.com"]}
    error = assert_error(client.post(f"{API}/runs", json=body), 422, "invalid_request")
    assert "at most 100,000 names in all, got 100,001" in error["message"]


def test_job_listings_leave_out_payload_and_result(client: TestClient, backend: str) -> None:
    job = enqueue(client, "diag.fail", payload={"message": "m" * 5_000})
    [item] = client.get(f"{API}/jobs").json()["items"]
    assert "payload" not in item and "result" not in item
    assert {key: value for key, value in job.items() if key not in ("payload", "result")} == item
    assert client.get(f"{API}/jobs/{job['id']}").json()["payload"]["message"] == "m" * 5_000
