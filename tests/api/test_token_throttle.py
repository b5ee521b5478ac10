"""Guessing the token is slowed down per client address, on the API's bearer check and the
dashboard's login form alike (one count for both): after five wrong tokens an address must
wait, a try that does not is a 429 with Retry-After, the right token from another address still
works, and each wrong token is logged with the address. On a clock the test moves by hand."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from dominus.api.token_throttle import TokenThrottle
from dominus.server import create_app
from tests.support.api import API, LOCAL_BASE_URL, REQUESTED_BY_HEADER, TOKEN, api_settings
from tests.support.dashboard import csrf_of

pytestmark = pytest.mark.backends("sqlite", "postgresql")


GUESSER = ("192.0.2.66", 40000)
OPERATOR = ("192.0.2.7", 40001)


class Clock:
    def __init__(self) -> None:
        self.now = 5_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def app(database_url: str, clock: Clock) -> Iterator[FastAPI]:
    settings = api_settings(database_url, DOMINUS_API_TOKEN=TOKEN)
    built = create_app(settings, token_throttle=TokenThrottle(clock=clock))
    yield built
    built.state.services.runtime.engine.dispose()


@pytest.fixture
def client_at(app: FastAPI) -> Iterator[Callable[[tuple[str, int]], TestClient]]:
    """A client of the app connecting from the given address."""
    clients: list[TestClient] = []

    def make(address: tuple[str, int]) -> TestClient:
        client = TestClient(
            app,
            base_url=LOCAL_BASE_URL,
            raise_server_exceptions=False,
            headers={REQUESTED_BY_HEADER: "dominus-tests"},
            client=address,
            follow_redirects=False,
        )
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_wrong_bearer_tokens_make_the_address_wait(
    client_at: Callable[[tuple[str, int]], TestClient],
    clock: Clock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    guesser, operator = client_at(GUESSER), client_at(OPERATOR)
    with caplog.at_level(logging.WARNING, logger="dominus.api"):
        answers = [guesser.get(f"{API}/jobs", headers=bearer(f"guess-{n}")) for n in range(20)]
    assert [answer.status_code for answer in answers] == [401] * 5 + [429] * 15
    for answer in answers[5:]:
        assert answer.headers["retry-after"] == "1"
        assert answer.json()["error"]["code"] == "too_many_attempts"
    # Only the five tokens that were looked at are logged, each with the address, no token.
    failures = [r.getMessage() for r in caplog.records if "wrong API token" in r.getMessage()]
    assert len(failures) == 5
    assert all(f"from {GUESSER[0]} on '{API}/jobs'" in line for line in failures)
    assert not any("guess-" in record.getMessage() for record in caplog.records)
    # The right token from another address is not held back; from the guesser's it must wait.
    assert operator.get(f"{API}/jobs", headers=bearer(TOKEN)).status_code == 200
    assert guesser.get(f"{API}/jobs", headers=bearer(TOKEN)).status_code == 429
    clock.now += 1
    assert guesser.get(f"{API}/jobs", headers=bearer(TOKEN)).status_code == 200
    # ... which started its count again: five free tries.
    tries = [guesser.get(f"{API}/jobs", headers=bearer("x")).status_code for _ in range(6)]
    assert tries == [401] * 5 + [429]


def test_the_wait_doubles_with_each_wrong_token(
    client_at: Callable[[tuple[str, int]], TestClient], clock: Clock
) -> None:
    guesser = client_at(GUESSER)
    for _ in range(5):
        guesser.get(f"{API}/jobs", headers=bearer("wrong"))
    waits = []
    for _ in range(8):
        refused = guesser.get(f"{API}/jobs", headers=bearer("wrong"))
        assert refused.status_code == 429
        wait = int(refused.headers["retry-after"])
        waits.append(wait)
        clock.now += wait
        assert guesser.get(f"{API}/jobs", headers=bearer("wrong")).status_code == 401
    assert waits == [1, 2, 4, 8, 16, 32, 60, 60]


def test_a_request_that_could_not_match_any_token_is_not_a_guess(
    client_at: Callable[[tuple[str, int]], TestClient], caplog: pytest.LogCaptureFixture
) -> None:
    monitor = client_at(GUESSER)
    malformed = [{}, {"Authorization": "Bearer "}, {"Authorization": f"Basic {TOKEN}"}]
    with caplog.at_level(logging.WARNING, logger="dominus.api"):
        answers = [
            monitor.get(f"{API}/workers", headers=headers).status_code for headers in malformed * 10
        ]
        assert log_in(monitor, "") == 401
    assert answers == [401] * 30
    assert not [r for r in caplog.records if "wrong API token" in r.getMessage()]
    assert monitor.get(f"{API}/workers", headers=bearer(TOKEN)).status_code == 200


def log_in(client: TestClient, token: str) -> int:
    form = client.get("/login")
    answer = client.post(
        "/login", data={"csrf_token": csrf_of(form.text), "token": token, "next": "/"}
    )
    if answer.status_code == 429:
        assert answer.headers["retry-after"] == "1"
        assert "Too many wrong tokens from this address" in answer.text
    code: int = answer.status_code
    return code


def test_wrong_tokens_on_the_login_form_make_the_address_wait(
    client_at: Callable[[tuple[str, int]], TestClient],
    clock: Clock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    guesser, operator = client_at(GUESSER), client_at(OPERATOR)
    with caplog.at_level(logging.WARNING, logger="dominus.api"):
        answers = [log_in(guesser, f"guess-{n}") for n in range(20)]
    assert answers == [401] * 5 + [429] * 15
    failures = [r.getMessage() for r in caplog.records if "wrong API token" in r.getMessage()]
    assert len(failures) == 5 and all(f"from {GUESSER[0]} on '/login'" in f for f in failures)
    assert log_in(operator, TOKEN) == 303
    assert log_in(guesser, TOKEN) == 429  # even the right token waits
    clock.now += 1
    assert log_in(guesser, TOKEN) == 303


def test_the_api_and_the_login_form_share_one_count(
    client_at: Callable[[tuple[str, int]], TestClient],
) -> None:
    guesser = client_at(GUESSER)
    for _ in range(3):
        assert guesser.get(f"{API}/jobs", headers=bearer("wrong")).status_code == 401
    assert log_in(guesser, "wrong") == 401
    assert log_in(guesser, "wrong") == 401
    assert guesser.get(f"{API}/jobs", headers=bearer(TOKEN)).status_code == 429
    assert log_in(guesser, TOKEN) == 429
