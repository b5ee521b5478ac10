"""The dashboard's forms: the CSRF token of a page and a form POST."""

from __future__ import annotations

import re
from typing import Any

from fastapi.testclient import TestClient


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf_token" value="([0-9a-f]+)"', html)
    assert found, "no CSRF token on the page"
    return found.group(1)


def post(client: TestClient, path: str, token: str | None, **fields: Any) -> Any:
    data = dict(fields)
    if token is not None:
        data["csrf_token"] = token
    return client.post(path, data=data, follow_redirects=False)
