"""The dashboard's pages through the app (ADR 0023), on SQLite and PostgreSQL: they answer
HTML from the same services as the API, every POST needs its page's CSRF token (and the
origin guard applies), the token's login and its cookie, the dashboard's share of the stream
slots, and the actions (cancel, retry, requeue one or many, purge, schedules, a run)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dominus.errors import DatabaseError
from dominus.runtime import Runtime
from tests.support.api import API, TOKEN, assert_error, enqueue, finish_jobs, get_job, runtime_of
from tests.support.dashboard import csrf_of, post

pytestmark = pytest.mark.backends("sqlite", "postgresql")


PAGES = [
    "/",
    "/jobs",
    "/jobs?status=failed&type=diag.fail&since=24h",
    "/dead-letters",
    "/dead-letters?include_requeued=true",
    "/dead-letters-purge",
    "/dead-letters?type=diag.fail&age=older-7d",
    "/history",
    "/history?window=7d&type=diag.noop",
    "/jobs?status=retrying&q=50%25_x",
    "/workers",
    "/schedules",
    "/queues",
    "/runs",
    "/appraise",
    "/portfolio",
    "/portfolio?all_alerts=true",
    "/login",
]


def page_token(client: TestClient, path: str = "/dead-letters-purge") -> str:
    response = client.get(path)
    assert response.status_code == 200, response.text
    return csrf_of(response.text)


def dead_letter(client: TestClient, runtime: Runtime, fail_times: int = 1) -> dict[str, Any]:
    enqueue(client, "diag.fail", payload={"fail_times": fail_times}, max_attempts=1)
    finish_jobs(runtime)
    entries = client.get(f"{API}/dlq").json()
    entry: dict[str, Any] = entries[0]
    return entry


@pytest.mark.parametrize("path", PAGES)
def test_every_page_answers_html(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["cache-control"] == "no-store"
    assert '<main id="main">' in response.text
    assert "<h1>" in response.text


def test_the_pages_show_what_the_api_says(client: TestClient, runtime: Runtime) -> None:
    done = enqueue(client, "diag.noop")
    entry = dead_letter(client, runtime)
    finish_jobs(runtime)
    overview = client.get("/").text
    stats = client.get(f"{API}/queue/stats").json()
    assert stats["dead_letter"] == 1
    assert re.search(r"dead letters</a></span><span class=\"value\">1<", overview)
    job_page = client.get(f"/jobs/{entry['job_id']}").text
    assert "Traceback" in job_page  # the failed attempt's traceback, from its event
    assert "DeliberateFailureError" in job_page
    jobs_page = client.get("/jobs?status=completed").text
    assert f'href="/jobs/{done["id"]}"' in jobs_page
    assert f'href="/jobs/{entry["job_id"]}"' not in jobs_page
    worker = client.get(f"{API}/workers").json()[0]
    assert worker["id"] in client.get("/workers").text


def test_unknown_things_are_html_error_pages(client: TestClient) -> None:
    for path in ("/jobs/999999", "/dead-letters/999999", "/runs/999999"):
        response = client.get(path)
        assert response.status_code == 404, path
        assert response.headers["content-type"].startswith("text/html")
    assert client.get("/jobs?status=nonsense").status_code == 422


def test_a_post_without_its_csrf_token_is_refused_and_changes_nothing(
    client: TestClient,
) -> None:
    job = enqueue(client, "diag.sleep", payload={"seconds": 60})
    for token in (None, "", "0" * 64):
        response = post(client, f"/jobs/{job['id']}/cancel", token)
        assert response.status_code == 403, response.text
        assert get_job(client, job["id"])["status"] == "pending"
    # A header is as good as the field (htmx sends it); the page's token works.
    token = page_token(client)
    refused = client.post(
        f"/jobs/{job['id']}/cancel", headers={"X-CSRF-Token": "nope"}, follow_redirects=False
    )
    assert refused.status_code == 403
    response = client.post(
        f"/jobs/{job['id']}/cancel", headers={"X-CSRF-Token": token}, follow_redirects=False
    )
    assert response.status_code == 303
    assert response.headers["location"] == f"/jobs/{job['id']}?notice=cancelled"
    assert get_job(client, job["id"])["status"] == "cancelled"


def test_a_page_post_from_another_site_is_refused_even_with_a_token(client: TestClient) -> None:
    job = enqueue(client, "diag.sleep", payload={"seconds": 60})
    token = page_token(client)
    response = client.post(
        f"/jobs/{job['id']}/cancel",
        data={"csrf_token": token},
        headers={"Origin": "http://attacker.example"},
        follow_redirects=False,
    )
    assert_error(response, 403, "forbidden_origin")
    assert get_job(client, job["id"])["status"] == "pending"
    # And pages answer only to this server's names (DNS rebinding).
    assert client.get("/", headers={"Host": "attacker.example"}).status_code == 421


def test_job_actions_cancel_then_retry(client: TestClient) -> None:
    job = enqueue(client, "diag.sleep", payload={"seconds": 60})
    token = page_token(client)
    assert post(client, f"/jobs/{job['id']}/cancel", token).status_code == 303
    again = post(client, f"/jobs/{job['id']}/cancel", token)
    assert again.status_code == 409  # already ended: the API's conflict, as a page
    assert again.headers["content-type"].startswith("text/html")
    response = post(client, f"/jobs/{job['id']}/retry", token)
    assert response.headers["location"] == f"/jobs/{job['id']}?notice=retried"
    assert get_job(client, job["id"])["status"] == "pending"


def test_requeue_one_and_many_dead_letters(client: TestClient, runtime: Runtime) -> None:
    first = dead_letter(client, runtime, fail_times=5)
    second = dead_letter(client, runtime, fail_times=5)
    third = dead_letter(client, runtime, fail_times=5)
    token = page_token(client)
    response = post(client, f"/dead-letters/{first['id']}/requeue", token)
    assert response.headers["location"] == f"/jobs/{first['job_id']}?notice=requeued"
    assert get_job(client, first["job_id"])["status"] == "pending"
    response = client.post(
        "/dead-letters/requeue",
        content=f"csrf_token={token}&entry={second['id']}&entry={third['id']}&entry={first['id']}",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        follow_redirects=False,
    )
    assert response.headers["location"] == "/dead-letters?notice=requeued-many"
    for entry in (second, third):
        assert get_job(client, entry["job_id"])["status"] == "pending"
    assert client.get(f"{API}/dlq").json() == []
    nothing = post(client, "/dead-letters/requeue", token)
    assert nothing.headers["location"] == "/dead-letters?notice=nothing-selected"


NOT_ENTRY_IDS = {
    "superscript": "²",
    "arabic-indic": "٣",
    "5000-digits": "9" * 5_000,
    "past-bigint": str(2**63),
    "zero": "0",
    "negative": "-1",
    "exponent": "1e3",
    "space": " 1",
    "empty": "",
}


@pytest.mark.parametrize("value", NOT_ENTRY_IDS.values(), ids=NOT_ENTRY_IDS.keys())
def test_requeue_many_refuses_what_is_not_an_entry_id_with_a_400(
    client: TestClient, runtime: Runtime, value: str
) -> None:
    entry = dead_letter(client, runtime)
    response = client.post(
        "/dead-letters/requeue",
        data={"csrf_token": page_token(client), "entry": [str(entry["id"]), value]},
        follow_redirects=False,
    )
    assert response.status_code == 400, response.text
    assert "text/html" in response.headers["content-type"]
    assert "is not a number from 1 to" in response.text
    # Nothing was requeued, not even the valid id beside the bad one.
    assert [left["id"] for left in client.get(f"{API}/dlq").json()] == [entry["id"]]


def test_purge_needs_its_confirmation(client: TestClient, runtime: Runtime) -> None:
    dead_letter(client, runtime)
    token = page_token(client)
    unconfirmed = post(client, "/dead-letters-purge", token)
    assert unconfirmed.headers["location"] == "/dead-letters-purge"
    assert len(client.get(f"{API}/dlq").json()) == 1
    bad = post(client, "/dead-letters-purge", token, confirm="yes", older_than_days="-3")
    assert bad.status_code == 422
    assert len(client.get(f"{API}/dlq").json()) == 1
    kept = post(client, "/dead-letters-purge", token, confirm="yes", older_than_days="30")
    assert kept.headers["location"] == "/dead-letters?notice=purged"
    assert len(client.get(f"{API}/dlq").json()) == 1  # failed just now, not 30 days ago
    purged = post(client, "/dead-letters-purge", token, confirm="yes")
    assert purged.headers["location"] == "/dead-letters?notice=purged"
    assert client.get(f"{API}/dlq").json() == []


def test_schedule_actions(make_client: Callable[..., TestClient]) -> None:
    client = make_client(SCHEDULER_DIAG_CRON="0 3 * * *")
    page = client.get("/schedules").text
    assert 'action="/schedules/diag/run"' in page
    token = csrf_of(page)
    response = post(client, "/schedules/diag/run", token)
    assert response.status_code == 303
    job_id = int(response.headers["location"].split("/jobs/")[1].split("?")[0])
    assert get_job(client, job_id)["type"] == "diag.noop"
    again = post(client, "/schedules/diag/run", token)
    assert again.headers["location"] == f"/jobs/{job_id}?notice=schedule-already"
    assert post(client, "/schedules/diag/disable", token).status_code == 303
    [diag] = [s for s in client.get(f"{API}/schedules").json() if s["name"] == "diag"]
    assert diag["state"] == "disabled"
    assert 'action="/schedules/diag/enable"' in client.get("/schedules").text
    assert post(client, "/schedules/diag/enable", token).status_code == 303
    [diag] = [s for s in client.get(f"{API}/schedules").json() if s["name"] == "diag"]
    assert diag["state"] == "enabled"
    assert post(client, "/schedules/nope/run", token).status_code == 404


def test_start_a_run_from_the_form(make_client: Callable[..., TestClient]) -> None:
    client = make_client(DOMINUS_PROVIDERS="sample")
    token = page_token(client, "/runs")
    empty = post(client, "/runs", token, keywords=" \n", brandables="", closeouts="")
    assert empty.status_code == 422
    assert "give at least one" in empty.text
    bad = post(client, "/runs", token, keywords="", brandables="", closeouts="a.com,old")
    assert bad.status_code == 422
    assert "closeout line 1: age" in bad.text
    response = post(
        client,
        "/runs",
        token,
        keywords="home gym\nmeal prep",
        brandables="zentrova, novaquill",
        closeouts="domain,age,backlinks,wayback,price\noldgardentools.com,12,300,90,1850\nb.com",
    )
    assert response.status_code == 303, response.text
    run_id = int(response.headers["location"].split("/runs/")[1].split("?")[0])
    run = client.get(f"{API}/runs/{run_id}").json()
    assert run["input"]["keywords"] == ["home gym", "meal prep"]
    assert run["input"]["brandable"] == ["zentrova", "novaquill"]
    closeouts = run["input"]["closeout"]
    assert [c["domain"] for c in closeouts] == ["oldgardentools.com", "b.com"]
    assert (closeouts[0]["age"], closeouts[0]["backlinks"], closeouts[0]["price"]) == (
        12,
        300,
        1850,
    )
    page = client.get(f"/runs/{run_id}").text
    assert 'sse-connect="/live/runs/' in page  # not finished: the funnel is live
    finish_jobs(runtime_of(client))
    page = client.get(f"/runs/{run_id}?sort=domain&order=asc").text
    domains = re.findall(r"<tr>\s*<td>([a-z0-9.-]+\.[a-z]+)</td>", page)
    assert domains and domains == sorted(domains)
    assert 'aria-sort="ascending"' in page
    csv_page = client.get(f"/runs/{run_id}/candidates.csv")
    csv_api = client.get(f"{API}/runs/{run_id}/candidates.csv")
    assert csv_page.status_code == 200
    assert csv_page.content == csv_api.content
    assert csv_page.headers["content-disposition"] == csv_api.headers["content-disposition"]


def test_appraise_one_domain(make_client: Callable[..., TestClient]) -> None:
    client = make_client(DOMINUS_PROVIDERS="sample")
    page = client.get("/appraise", params={"domain": "homegym.com"})
    assert page.status_code == 200
    [api] = client.get(f"{API}/score", params={"domain": "homegym.com"}).json()
    assert f'tier-{api["tier"]}">{api["tier"]}<' in page.text
    assert "SAMPLE DATA" in page.text
    invalid = client.get("/appraise", params={"domain": "bad..name"})
    assert invalid.status_code == 422
    assert 'role="alert"' in invalid.text


def test_dashboard_streams_take_at_most_half_the_slots(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(DOMINUS_MAX_STREAMS=4)
    job = enqueue(client, "diag.noop")
    share = client.app.state.dashboard.streams  # type: ignore[attr-defined]
    assert share.max_streams == 2
    assert share.try_open() and share.try_open()  # two dashboard tabs streaming
    try:
        refused = client.get("/live/overview")
        assert_error(refused, 429, "too_many_streams")
        assert refused.headers["retry-after"]
        # The API's own streams still get their slots.
        with client.stream("GET", f"{API}/jobs/{job['id']}/stream") as stream:
            assert stream.status_code == 200
    finally:
        share.close()
        share.close()
    services = client.app.state.services  # type: ignore[attr-defined]
    assert services.streams.open_streams == 0


def test_a_finished_jobs_stream_sends_its_html_then_ends(client: TestClient) -> None:
    job = enqueue(client, "diag.noop")
    finish_jobs(runtime_of(client))
    body = client.get(f"/live/jobs/{job['id']}").text
    events = [block for block in body.split("\n\n") if block.strip()]
    assert events[0].startswith("event: job\n")
    assert 'data: <dl class="facts">' in events[0]
    assert "completed" in events[0]
    assert events[-1] == "event: end\ndata: completed"


# --- with DOMINUS_API_TOKEN ---------------------------------------------------------------


@pytest.fixture
def token_client(make_client: Callable[..., TestClient]) -> TestClient:
    client = make_client(DOMINUS_API_TOKEN=TOKEN)
    client.follow_redirects = False
    return client


def log_in(client: TestClient, token: str = TOKEN, next_path: str = "/") -> Any:
    form = client.get("/login")
    return client.post(
        "/login",
        data={"csrf_token": csrf_of(form.text), "token": token, "next": next_path},
        follow_redirects=False,
    )


def test_pages_send_to_the_login_form(token_client: TestClient) -> None:
    response = token_client.get("/jobs?status=failed")
    assert response.status_code == 303
    assert response.headers["location"] == "/login?next=%2Fjobs%3Fstatus%3Dfailed"
    assert token_client.get("/live/overview").status_code == 303
    assert token_client.post("/jobs/1/cancel").status_code == 403  # no CSRF token either
    assert token_client.get("/static/htmx.min.js").status_code == 200  # public


def test_login_sets_a_signed_strict_http_only_cookie(token_client: TestClient) -> None:
    wrong = log_in(token_client, token="wrong-token")
    assert wrong.status_code == 401
    assert "dominus_session" not in wrong.headers.get("set-cookie", "")
    response = log_in(token_client, next_path="/workers")
    assert response.status_code == 303
    assert response.headers["location"] == "/workers"
    cookies = response.headers.get_list("set-cookie")
    [session] = [c for c in cookies if c.startswith("dominus_session=")]
    assert "HttpOnly" in session and "SameSite=Strict" in session and "Path=/" in session
    assert "Secure" not in session  # plain http here
    assert TOKEN not in session
    assert token_client.get("/workers").status_code == 200
    # Forged or tampered cookies count for nothing.
    value = session.split(";")[0].split("=", 1)[1]
    for forged in (value[:-1] + ("0" if value[-1] != "0" else "1"), "v1.x.1.abc", ""):
        token_client.cookies.clear()
        token_client.cookies.set("dominus_session", forged)
        assert token_client.get("/workers").status_code == 303


def test_over_https_the_cookie_is_secure(make_client: Callable[..., TestClient]) -> None:
    client = make_client(DOMINUS_API_TOKEN=TOKEN)
    https = TestClient(client.app, base_url="https://127.0.0.1")
    with https:
        response = log_in(https)
    [session] = [c for c in response.headers.get_list("set-cookie") if "dominus_session=" in c]
    assert "Secure" in session


def test_the_cookie_does_not_open_the_api_and_the_bearer_token_does(
    token_client: TestClient,
) -> None:
    assert log_in(token_client).status_code == 303
    assert token_client.get("/").status_code == 200
    assert_error(token_client.get(f"{API}/jobs"), 401, "unauthorized")
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    assert token_client.get(f"{API}/jobs", headers=bearer).status_code == 200


def test_login_redirects_only_within_the_site(token_client: TestClient) -> None:
    for target in ("//attacker.example/", "https://attacker.example/", "/\\attacker.example"):
        response = log_in(token_client, next_path=target)
        assert response.headers["location"] == "/", target


def test_a_session_of_another_token_is_not_valid(
    make_client: Callable[..., TestClient],
) -> None:
    first = make_client(DOMINUS_API_TOKEN=TOKEN)
    response = log_in(first)
    value = response.cookies["dominus_session"]
    other = make_client(DOMINUS_API_TOKEN=TOKEN + "-changed")
    other.cookies.set("dominus_session", value)
    assert other.get("/", follow_redirects=False).status_code == 303


def test_logging_out_ends_the_session_on_the_server(
    make_client: Callable[..., TestClient], token_client: TestClient
) -> None:
    """The old cookie is refused after logout (not only deleted from the browser), in this
    process and in another one serving the same database, and so is every other session of
    the token; logging in again works."""
    assert log_in(token_client).status_code == 303
    kept = token_client.cookies["dominus_session"]
    elsewhere = make_client(DOMINUS_API_TOKEN=TOKEN)  # another process, the same database
    elsewhere.follow_redirects = False
    assert log_in(elsewhere).status_code == 303
    other_session = elsewhere.cookies["dominus_session"]
    assert elsewhere.get("/workers").status_code == 200
    csrf = csrf_of(token_client.get("/workers").text)
    response = post(token_client, "/logout", csrf)
    assert response.headers["location"] == "/login?notice=logged-out"
    for client, cookie in ((token_client, kept), (elsewhere, kept), (elsewhere, other_session)):
        client.cookies.clear()
        client.cookies.set("dominus_session", cookie)
        assert client.get("/workers").status_code == 303
        # Its CSRF token went with it: any action is refused before it runs.
        assert post(client, "/jobs/1/cancel", csrf).status_code == 403
    token_client.cookies.clear()
    assert log_in(token_client).status_code == 303
    assert token_client.get("/workers").status_code == 200


def test_a_session_needs_a_reachable_database(
    make_client: Callable[..., TestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checking the session generation reads the database: down, it is a 503 page with
    Retry-After, never a 500 or a page served on an unchecked cookie."""
    client = make_client(DOMINUS_API_TOKEN=TOKEN)
    client.follow_redirects = False
    assert log_in(client).status_code == 303
    generations = client.app.state.dashboard.generations  # type: ignore[attr-defined]

    def unavailable() -> int:
        raise DatabaseError("the database is unavailable", detail="connection refused")

    monkeypatch.setattr(generations, "current", unavailable)
    response = client.get("/workers")
    assert response.status_code == 503
    assert response.headers["retry-after"] == "1"
    assert "text/html" in response.headers["content-type"]


def test_logged_in_posts_need_the_sessions_csrf_token(token_client: TestClient) -> None:
    job = enqueue_with_token(token_client)
    assert log_in(token_client).status_code == 303
    page = token_client.get(f"/jobs/{job}")
    token = csrf_of(page.text)
    assert post(token_client, f"/jobs/{job}/cancel", None).status_code == 403
    # The token of an anonymous page (before login) is not this session's.
    assert post(token_client, f"/jobs/{job}/cancel", "f" * 64).status_code == 403
    assert post(token_client, f"/jobs/{job}/cancel", token).status_code == 303
    assert post(token_client, "/logout", token).status_code == 303


def enqueue_with_token(client: TestClient) -> int:
    response = client.post(
        f"{API}/jobs",
        json={"type": "diag.sleep", "payload": {"seconds": 60}},
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    assert response.status_code == 202, response.text
    job_id: int = response.json()["id"]
    return job_id
