"""OpenAPI links: which value of one operation's response names the resource another operation
acts on (the job a `POST /jobs` created is the `job_id` of `GET /jobs/{job_id}`, of its cancel and
retry...). A client reads them as the API's workflows; a stateful fuzzer (schemathesis) follows
them to chain operations on real resources instead of on made-up ids.

The links are declared here once, by path and method, and written into the document under the
operationIds FastAPI generated, so they follow the routes: a link whose source or target is not
in the document is left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

API = "/api/v1"


@dataclass(frozen=True)
class Resource:
    """A kind of resource: the path parameter naming it and the operations taking it."""

    parameter: str
    targets: tuple[tuple[str, str, str], ...]  # (link name, method, path)


@dataclass(frozen=True)
class Producer:
    """An operation whose successful responses name resources: kind -> JSON pointer in the body."""

    method: str
    path: str
    statuses: tuple[str, ...]
    pointers: dict[str, str]


JOB = f"{API}/jobs/{{job_id}}"
RUN = f"{API}/runs/{{run_id}}"
DEAD_LETTER = f"{API}/dlq/{{entry_id}}"
SCHEDULE = f"{API}/schedules/{{name}}"

RESOURCES = {
    "job": Resource(
        "job_id",
        (
            ("GetJob", "get", JOB),
            ("GetJobEvents", "get", f"{JOB}/events"),
            ("StreamJob", "get", f"{JOB}/stream"),
            ("CancelJob", "post", f"{JOB}/cancel"),
            ("RetryJob", "post", f"{JOB}/retry"),
        ),
    ),
    "run": Resource(
        "run_id",
        (
            ("GetRun", "get", RUN),
            ("GetRunJob", "get", f"{RUN}/job"),
            ("GetRunCandidates", "get", f"{RUN}/candidates"),
            ("GetRunCandidatesCsv", "get", f"{RUN}/candidates.csv"),
            ("StreamRun", "get", f"{RUN}/stream"),
        ),
    ),
    "dead_letter": Resource(
        "entry_id",
        (
            ("GetDeadLetter", "get", DEAD_LETTER),
            ("RequeueDeadLetter", "post", f"{DEAD_LETTER}/requeue"),
        ),
    ),
    "schedule": Resource(
        "name",
        (
            ("RunSchedule", "post", f"{SCHEDULE}/run"),
            ("EnableSchedule", "post", f"{SCHEDULE}/enable"),
            ("DisableSchedule", "post", f"{SCHEDULE}/disable"),
        ),
    ),
}

A_JOB = {"job": "/id"}
PRODUCERS = (
    Producer("post", f"{API}/jobs", ("202", "200"), A_JOB),
    Producer("get", f"{API}/jobs", ("200",), {"job": "/items/0/id"}),
    Producer("get", JOB, ("200",), A_JOB),
    Producer("post", f"{JOB}/cancel", ("200",), A_JOB),
    Producer("post", f"{JOB}/retry", ("200",), A_JOB),
    # A run's job id may be null (a run made in process has no job): its job is reached
    # through GET /runs/{run_id}/job instead.
    Producer("post", f"{API}/runs", ("202",), {"run": "/run_id"}),
    Producer("get", f"{API}/runs", ("200",), {"run": "/items/0/run_id"}),
    Producer("get", RUN, ("200",), {"run": "/run_id"}),
    Producer("get", f"{RUN}/job", ("200",), A_JOB),
    Producer("get", f"{API}/dlq", ("200",), {"dead_letter": "/0/id", "job": "/0/job_id"}),
    Producer("get", DEAD_LETTER, ("200",), {"dead_letter": "/id", "job": "/job_id"}),
    Producer("post", f"{DEAD_LETTER}/requeue", ("200",), A_JOB),
    Producer("get", f"{API}/schedules", ("200",), {"schedule": "/0/name"}),
    Producer("post", f"{SCHEDULE}/run", ("202", "200"), A_JOB),
    Producer("post", f"{SCHEDULE}/enable", ("200",), {"schedule": "/name"}),
    Producer("post", f"{SCHEDULE}/disable", ("200",), {"schedule": "/name"}),
)


def with_links(document: dict[str, Any]) -> dict[str, Any]:
    """`document` with the links above added to its producers' responses."""
    paths: dict[str, Any] = document.get("paths", {})
    for producer in PRODUCERS:
        operation = paths.get(producer.path, {}).get(producer.method)
        if operation is None:
            continue
        links = _links_of(paths, producer)
        if not links:
            continue
        for status in producer.statuses:
            response = operation.get("responses", {}).get(status)
            if response is not None:
                response.setdefault("links", {}).update(links)
    return document


def _links_of(paths: dict[str, Any], producer: Producer) -> dict[str, Any]:
    links: dict[str, Any] = {}
    for kind, pointer in producer.pointers.items():
        resource = RESOURCES[kind]
        for name, method, path in resource.targets:
            target = paths.get(path, {}).get(method)
            if target is None or "operationId" not in target:
                continue
            links[name] = {
                "operationId": target["operationId"],
                "parameters": {resource.parameter: f"$response.body#{pointer}"},
                "description": f"The {kind.replace('_', ' ')} this response names.",
            }
    return links
