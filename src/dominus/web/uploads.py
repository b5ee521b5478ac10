"""A `multipart/form-data` body read in memory: its text fields and its files, by name.

The dashboard's upload forms post this way. The body is whole already (the request limits
middleware caps it at DOMINUS_MAX_BODY_BYTES before anything reads it), so it is parsed from
the bytes held, with the standard library's MIME parser (as the API's CSV import is): nothing is
written to disk, and a file's name as the browser sends it is kept only to be shown, never used
as a path."""

from __future__ import annotations

from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser

MULTIPART = "multipart/form-data"
MAX_FILENAME_SHOWN = 200


@dataclass(frozen=True)
class Upload:
    filename: str  # as the browser named it: for display only
    data: bytes


@dataclass(frozen=True)
class MultipartForm:
    fields: dict[str, list[str]] = field(default_factory=dict)
    files: dict[str, Upload] = field(default_factory=dict)

    def first(self, name: str, default: str = "") -> str:
        values = self.fields.get(name)
        return values[0] if values else default


def media_type(content_type: str) -> str:
    return content_type.partition(";")[0].strip().lower()


def parse_multipart(content_type: str, body: bytes) -> MultipartForm | None:
    """The form in `body`; None when it is not a multipart form at all."""
    if media_type(content_type) != MULTIPART:
        return None
    head = f"Content-Type: {content_type}\r\n\r\n".encode("latin-1", "replace")
    message = BytesParser(policy=policy.HTTP).parsebytes(head + body)
    if not isinstance(message, EmailMessage) or not message.is_multipart():
        return None
    form = MultipartForm()
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            continue
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        filename = part.get_filename()
        if filename is not None:
            form.files.setdefault(name, Upload(filename[:MAX_FILENAME_SHOWN], data))
        else:
            form.fields.setdefault(name, []).append(data.decode("utf-8", errors="replace"))
    return form
