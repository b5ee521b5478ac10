"""The token's rules: an empty or whitespace-only DOMINUS_API_TOKEN is a
configuration error everywhere (it used to turn authentication off and pass `serve`'s public-bind
check), a token used off loopback has at least 16 characters, and tokens are compared as UTF-8
bytes (a non-ASCII token used never to match)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dominus.config import Settings
from dominus.errors import ConfigurationError
from dominus.server import create_app
from tests.support.api import API, assert_error
from tests.support.cli import CliResult
from tests.support.serving import refused_serve

pytestmark = pytest.mark.backends("sqlite", "postgresql")


UNICODE_TOKEN = "pässwörd-ünïcode-✓-token"


def assert_refused(done: CliResult, *words: str) -> None:
    """Exit 2 with one `error: ` line naming the variable (and `words`)."""
    assert done.code == 2, str(done)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: "), lines
    assert "DOMINUS_API_TOKEN" in lines[0], lines
    for word in words:
        assert word in lines[0], lines


@pytest.mark.parametrize("token", ["", " ", "\t  "], ids=["empty", "space", "whitespace"])
@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
def test_serve_refuses_an_empty_token(
    database_url: str, tmp_path: Path, token: str, host: str
) -> None:
    done = refused_serve(database_url, tmp_path, "--host", host, DOMINUS_API_TOKEN=token)
    assert_refused(done, "empty")


def test_serve_refuses_a_short_token_off_loopback(database_url: str, tmp_path: Path) -> None:
    done = refused_serve(database_url, tmp_path, "--host", "0.0.0.0", DOMINUS_API_TOKEN="x" * 15)
    assert_refused(done, "0.0.0.0", "15 characters", "at least 16")


def test_a_token_with_surrounding_whitespace_is_refused_without_echoing_it(
    database_url: str, tmp_path: Path
) -> None:
    done = refused_serve(database_url, tmp_path, DOMINUS_API_TOKEN=" a-secret-never-printed ")
    assert_refused(done, "whitespace")
    assert "a-secret-never-printed" not in done.stderr


def test_create_app_refuses_an_empty_token_however_the_settings_were_built(
    database_url: str,
) -> None:
    """Settings built directly skip load_settings; create_app still refuses to run open."""
    settings = Settings(_env_file=None, DATABASE_URL=database_url, DOMINUS_API_TOKEN="")
    with pytest.raises(ConfigurationError, match="DOMINUS_API_TOKEN"):
        create_app(settings)


def test_a_non_ascii_token_sent_as_utf8_bytes_is_accepted(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(DOMINUS_API_TOKEN=UNICODE_TOKEN)
    right = f"Bearer {UNICODE_TOKEN}".encode()
    response = client.get(f"{API}/queue/stats", headers={"Authorization": right})
    assert response.status_code == 200, response.text
    for wrong in (
        f"Bearer {UNICODE_TOKEN}x".encode(),
        f"Bearer {UNICODE_TOKEN}".encode("latin-1", errors="replace"),
        b"Bearer pa\xcc\x88sswo\xcc\x88rd-u\xcc\x88ni\xcc\x88code-\xe2\x9c\x93-token",  # NFD
        f"bearer {UNICODE_TOKEN[:-1]}".encode(),
    ):
        response = client.get(f"{API}/queue/stats", headers={"Authorization": wrong})
        assert_error(response, 401, "unauthorized")
