"""A `multipart/form-data` body read in memory: its text fields and its files, by name.

The dashboard's upload forms and the API's CSV import post this way. The body is whole already
(the request limits middleware caps it at DOMINUS_MAX_BODY_BYTES before anything reads it), so
it is parsed from the bytes held, with the standard library's MIME parser: nothing is written to
disk, and a file's name as the browser sends it is kept only to be shown, never used as a path.

That parser's cost grows with the square of the number of parts (25,000 empty parts, 225 KB,
take seconds) and it recurses into nested multiparts until Python's recursion limit. A form of
ours has a handful of fields and one file, so a body with more parts than MAX_PARTS, or with a
part that is itself multipart, is refused before or instead of being trusted; callers parse in
a worker thread (`parse_in_thread`) so that even a large single file never holds the event
loop."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage, Message
from email.parser import BytesParser

import anyio.to_thread

MULTIPART = "multipart/form-data"
MAX_FILENAME_SHOWN = 200
MAX_PARTS = 32  # the import form has six fields and a file; the confirm form a few more
_HEADERS_END = re.compile(rb"\r?\n\r?\n")
_NESTED = re.compile(rb"(?im)^content-type:[ \t]*multipart/")


class UnreadableMultipartError(ValueError):
    """The body is multipart but not a form we read: the reason, in one line."""


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
    """The form in `body`; None when it is not a multipart form at all.
    UnreadableMultipartError when it is one we do not read: no boundary, too many parts, a
    nested multipart, or bytes the parser cannot follow."""
    if media_type(content_type) != MULTIPART:
        return None
    head = f"Content-Type: {content_type}\r\n\r\n".encode("latin-1", "replace")
    _check_parts(head, body)
    try:
        message = BytesParser(policy=policy.HTTP).parsebytes(head + body)
        if not isinstance(message, EmailMessage) or not message.is_multipart():
            return None
        return _form(message)
    except UnreadableMultipartError:
        raise
    except (RecursionError, LookupError, ValueError, TypeError) as error:
        # The standard parser is lenient but not total: whatever it trips on is bad input
        reason = f"the multipart body cannot be read ({type(error).__name__})"
        raise UnreadableMultipartError(reason) from error


async def parse_in_thread(content_type: str, body: bytes) -> MultipartForm | None:
    """parse_multipart off the event loop: a 1 MiB file takes the parser a fifth of a second."""
    return await anyio.to_thread.run_sync(parse_multipart, content_type, body)


def _check_parts(head: bytes, body: bytes) -> None:
    """Refuse before parsing a body whose parts are more than MAX_PARTS (counted by the
    delimiters of its own boundary) or that nests a multipart in a part."""
    header = BytesParser(policy=policy.HTTP).parsebytes(head, headersonly=True)
    boundary = header.get_param("boundary")
    if not isinstance(boundary, str) or not boundary:
        raise UnreadableMultipartError("the multipart body has no boundary")
    chunks = body.split(b"--" + boundary.encode("latin-1", "replace"), MAX_PARTS + 2)
    if len(chunks) > MAX_PARTS + 2:  # the preamble and the closing delimiter's tail, more
        raise UnreadableMultipartError(f"the multipart body has more than {MAX_PARTS} parts")
    for chunk in chunks[1:]:
        # The parser would recurse into a nested multipart (and every level's parts cost it
        # as the outer ones do): a part's own headers must not declare one
        if _NESTED.search(_HEADERS_END.split(chunk, 1)[0]):
            raise UnreadableMultipartError("a part of the form is itself multipart")


def _form(message: Message) -> MultipartForm:
    form = MultipartForm()
    for part in message.iter_parts() if isinstance(message, EmailMessage) else ():
        if part.is_multipart():
            raise UnreadableMultipartError("a part of the form is itself multipart")
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
