"""The depth limit holds whatever encoding a JSON body is in. FastAPI parses bodies with
`json.loads(bytes)`, which reads UTF-16 and UTF-32 as well as UTF-8; scanned as raw bytes, a
UTF-16 character such as U+0122 holds a quote's byte (0x22) and would hide every bracket after
it, letting a body nested 100,000 deep reach the parser (ADR 0010)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from dominus.jobs.json_limits import text_nests_deeper_than
from tests.support.api import API, assert_error, runtime_of

DEPTH = 100_000


def deep_body(encoding: str) -> bytes:
    text = (
        '{"type": "diag.noop", "payload": {"k": "\u0122", "a": ' + "[" * DEPTH + "]" * DEPTH + "}}"
    )
    return text.encode(encoding)


def test_the_depth_scan_sees_a_utf16_body_as_json_reads_it() -> None:
    assert text_nests_deeper_than(deep_body("utf-8"))
    assert text_nests_deeper_than(deep_body("utf-16-le"))
    assert text_nests_deeper_than(deep_body("utf-32-be"))
    assert not text_nests_deeper_than('{"k": "\u0122", "a": [[1]]}'.encode("utf-16-le"))


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16-le", "utf-32-le"])
def test_a_deep_body_is_the_limits_422_whatever_its_encoding(
    client: TestClient, encoding: str
) -> None:
    response = client.post(
        f"{API}/jobs", content=deep_body(encoding), headers={"content-type": "application/json"}
    )
    # Before, a UTF-16 or UTF-32 body passed the scan, and Python's parser overflowed into
    # FastAPI's vague 400 "There was an error parsing the body"
    assert_error(response, 422, "invalid_request")
    assert runtime_of(client).store.list_jobs() == []
