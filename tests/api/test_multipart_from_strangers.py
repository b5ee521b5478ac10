"""A stranger's multipart body costs the server nothing: the dashboard's gate does not parse an
upload from a request without a session (it would be refused either way), parses a session's
off the event loop, and a body with too many parts or a nested multipart is refused before the
standard MIME parser sees it (that parser takes seconds over 25,000 empty parts and recurses
into nested ones until Python's recursion limit)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient

from dominus.api import multipart
from tests.support.api import API, TOKEN
from tests.support.dashboard import csrf_of
from tests.unit.test_multipart_bounds import nested

MakeClient = Callable[..., TestClient]


def many_tiny_parts(count: int) -> bytes:
    return b"--B\r\n\r\n\r\n" * count + b"--B--\r\n"


def test_a_nested_multipart_body_from_a_stranger_is_refused_as_any_other(
    make_client: MakeClient,
) -> None:
    client = make_client(DOMINUS_API_TOKEN=TOKEN)
    response = client.post(
        "/jobs/1/cancel",
        content=nested(1_000),  # 65 KB, far under DOMINUS_MAX_BODY_BYTES
        headers={"content-type": "multipart/form-data; boundary=b0"},
    )
    assert response.status_code == 403, (response.status_code, response.text[:200])


def recorded_parses(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """For each multipart parse: whether it ran with an event loop in its thread."""
    calls: list[bool] = []
    original = multipart.parse_multipart

    def recording(content_type: str, body: bytes) -> multipart.MultipartForm | None:
        try:
            asyncio.get_running_loop()
            calls.append(True)
        except RuntimeError:
            calls.append(False)
        return original(content_type, body)

    monkeypatch.setattr(multipart, "parse_multipart", recording)
    return calls


def test_a_strangers_upload_is_never_parsed(
    make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = make_client(DOMINUS_API_TOKEN=TOKEN)
    calls = recorded_parses(monkeypatch)
    # A path no route has: the origin guard does not look at it, so a page on another site
    # could send this as a plain multipart form (a simple request)
    response = client.post(
        "/no-such-page",
        content=many_tiny_parts(25_000),  # 225 KB: seconds of the standard parser's time
        headers={
            "content-type": "multipart/form-data; boundary=B",
            "origin": "https://evil.example",
        },
    )
    assert response.status_code == 403
    assert calls == []


def test_an_upload_the_gate_reads_is_parsed_off_the_event_loop(
    make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = make_client()  # no token: no login, so every form's token is looked for
    calls = recorded_parses(monkeypatch)
    body = b'--B\r\nContent-Disposition: form-data; name="csrf_token"\r\n\r\nwrong\r\n--B--\r\n'
    response = client.post(
        "/jobs/1/cancel", content=body, headers={"content-type": "multipart/form-data; boundary=B"}
    )
    assert response.status_code == 403
    assert calls == [False]  # parsed once, in a worker thread


def test_the_api_import_refuses_a_multipart_body_it_does_not_read(
    make_client: MakeClient,
) -> None:
    client = make_client(DOMINUS_API_TOKEN=TOKEN)
    for body, boundary, reason in (
        (many_tiny_parts(100), "B", "more than 32 parts"),
        (nested(3), "b0", "itself multipart"),
    ):
        response = client.post(
            f"{API}/portfolio/import",
            content=body,
            headers={
                "content-type": f"multipart/form-data; boundary={boundary}",
                "authorization": f"Bearer {TOKEN}",
            },
        )
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["code"] == "invalid_request"
        assert reason in error["message"]


def test_the_dashboard_import_says_why_it_cannot_read_an_upload(make_client: MakeClient) -> None:
    client = make_client()
    token = csrf_of(client.get("/portfolio/import").text)
    response = client.post(
        "/portfolio/import",
        content=many_tiny_parts(40),
        headers={"content-type": "multipart/form-data; boundary=B", "x-csrf-token": token},
    )
    assert response.status_code == 400
    assert "more than 32 parts" in response.text
