"""The multipart reader reads our forms (a handful of fields and one file) and refuses, before
the standard parser sees them, the bodies that parser would spend seconds or its recursion
limit on: many parts, a part that is itself multipart, no boundary."""

from __future__ import annotations

import pytest

from dominus.api.multipart import MAX_PARTS, UnreadableMultipartError, parse_multipart

FORM = "multipart/form-data; boundary=B"


def field(name: str, value: str) -> bytes:
    return f'--B\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()


def file_part(name: str, data: bytes) -> bytes:
    head = f'--B\r\nContent-Disposition: form-data; name="{name}"; filename="export.csv"\r\n'
    return head.encode() + b"Content-Type: text/csv\r\n\r\n" + data + b"\r\n"


def nested(depth: int) -> bytes:
    body = b""
    for level in range(depth):
        body += (
            f"--b{level}\r\nContent-Type: multipart/mixed; boundary=b{level + 1}\r\n\r\n".encode()
        )
    body += b"x\r\n"
    for level in reversed(range(depth)):
        body += f"--b{level}--\r\n".encode()
    return body


def test_a_form_with_a_file_is_read() -> None:
    csv = b"domain,price\n" + b"example.com,100\n" * 1_000
    form = parse_multipart(FORM, field("csrf_token", "t0k") + file_part("file", csv) + b"--B--\r\n")
    assert form is not None
    assert form.first("csrf_token") == "t0k"
    assert form.files["file"].data == csv
    assert form.files["file"].filename == "export.csv"


def test_as_many_parts_as_allowed_are_read() -> None:
    body = b"".join(field("ids", str(number)) for number in range(MAX_PARTS)) + b"--B--\r\n"
    form = parse_multipart(FORM, body)
    assert form is not None and len(form.fields["ids"]) == MAX_PARTS


def test_one_part_more_is_refused() -> None:
    body = b"".join(field("ids", str(number)) for number in range(MAX_PARTS + 1)) + b"--B--\r\n"
    with pytest.raises(UnreadableMultipartError, match=f"more than {MAX_PARTS} parts"):
        parse_multipart(FORM, body)


def test_many_tiny_parts_are_refused() -> None:
    with pytest.raises(UnreadableMultipartError, match="parts"):
        parse_multipart(FORM, b"--B\r\n\r\n\r\n" * 25_000 + b"--B--\r\n")


@pytest.mark.parametrize("depth", [2, 1_000])
def test_a_nested_multipart_is_refused(depth: int) -> None:
    with pytest.raises(UnreadableMultipartError, match="itself multipart"):
        parse_multipart("multipart/form-data; boundary=b0", nested(depth))


def test_a_body_without_a_boundary_is_refused() -> None:
    with pytest.raises(UnreadableMultipartError, match="no boundary"):
        parse_multipart("multipart/form-data", field("a", "b"))


def test_other_media_types_are_not_forms() -> None:
    assert parse_multipart("text/csv", b"domain\nexample.com\n") is None
