"""The trademark offices' bulk files, read as a stream of records (the files are gigabytes: one
record is held at a time, and each is cleared once read).

USPTO (`uspto-xml`): the Trademark Full Text XML files, daily (TDXF, "applications") and annual
(backfile): `<case-file>` records under a `<trademark-applications-daily>` (or annual) root, in a
.zip as downloaded or unzipped. Read of each: `serial-number`; from `case-file-header`:
`mark-identification` (the mark's words), `mark-drawing-code`, `abandonment-date`,
`cancellation-date`; `classifications/classification/international-code` (Nice classes); the
last `case-file-owners/case-file-owner/party-name`.

EUIPO (`euipo-xml`): the EU trade mark bulk download in the office's TM-XML (WIPO ST.66)
format: `<TradeMark>` records (any namespace). Read of each: the `operationCode` attribute,
`ApplicationNumber`, `MarkCurrentStatusCode`, `MarkFeature`, `MarkVerbalElementText` (the
words), every `ClassNumber`. Owners are in the download's separate applicant files, so an EUIPO
mark's owner is left empty.

Conservative, because a mark left out is a name the trademark gate clears: only marks that are
surely dead are skipped (a USPTO record with an abandonment or cancellation date; an EUIPO
status that is a refusal, withdrawal, surrender, cancellation or expiry, and not pending), and
marks without words (a USPTO design-only drawing, code 2, or no drawing, code 6 (sound, scent);
no mark text at all). A design mark WITH words is imported by its words.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from xml.etree.ElementTree import Element, ParseError, iterparse

from dominus.providers.errors import ProviderDataError
from dominus.providers.models import Mark

USPTO_XML = "uspto-xml"
EUIPO_XML = "euipo-xml"
FORMATS = (USPTO_XML, EUIPO_XML)

DEAD = "dead (abandoned, cancelled, refused, withdrawn, surrendered or expired)"
DELETED = "deleted by the office"
NOT_WORDS = "not a word mark (design only, or no drawing)"
NO_TEXT = "no mark text"

# USPTO mark drawing codes (first digit) without words: 2 design only, 6 no drawing.
_WORDLESS_DRAWINGS = {"2", "6"}
_DEAD_ENDINGS = ("refused", "withdrawn", "surrendered", "cancelled", "canceled", "expired")


@dataclass(frozen=True)
class BulkRecord:
    """One office record: the mark to keep, or why it is skipped. Either way its number names
    the mark, so a later record of a dead mark removes an earlier import of it."""

    registry: str
    number: str
    mark: Mark | None
    skipped: str | None = None


def local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def read_bulk(path: Path, format: str | None = None) -> Iterator[BulkRecord]:
    """Every record of the office file at `path` (a .zip with one XML file in it, or the XML),
    in file order. `format`: USPTO_XML or EUIPO_XML; None: told by the root element."""
    with _xml_stream(path) as stream:
        # The operator's download from the office. ElementTree never fetches external entities
        # or DTDs, and the bundled expat (>= 2.4) bounds entity expansion ("billion laughs").
        events = iterparse(stream, events=("start", "end"))  # noqa: S314
        try:
            root = _root(path, events)
            kind = format or _format_of(path, root)
            reader = _RECORD_READERS[kind]
            expected = "case-file" if kind == USPTO_XML else "TradeMark"
            if kind == USPTO_XML and not local(root.tag).startswith("trademark-applications"):
                raise ProviderDataError(path, f"not a USPTO trademark XML file (root <{root.tag}>)")
            open_elements = [root]
            for event, element in events:
                if event == "start":
                    open_elements.append(element)
                    continue
                open_elements.pop()
                if local(element.tag) == expected:
                    yield reader(element)
                    # What was read goes: memory stays one record deep however long the file.
                    if open_elements:
                        open_elements[-1].remove(element)
        except ParseError as error:
            line, _column = error.position
            raise ProviderDataError(path, f"not well-formed XML ({error.msg})", line) from None


@contextmanager
def _xml_stream(path: Path) -> Iterator[IO[bytes]]:
    try:
        if not zipfile.is_zipfile(path):
            with path.open("rb") as file:
                yield file
            return
        with zipfile.ZipFile(path) as archive:
            members = [name for name in archive.namelist() if name.lower().endswith(".xml")]
            if len(members) != 1:
                raise ProviderDataError(
                    path, f"expected one .xml file in the archive, found {len(members)}"
                )
            with archive.open(members[0]) as file:
                yield file
    except FileNotFoundError:
        raise ProviderDataError(path, "file not found") from None
    except (OSError, zipfile.BadZipFile) as exc:
        raise ProviderDataError(path, f"cannot read ({exc})") from None


def _root(path: Path, events: Iterator[tuple[str, Element]]) -> Element:
    for event, element in events:
        if event == "start":
            return element
    raise ProviderDataError(path, "empty: no XML in it")


def _format_of(path: Path, root: Element) -> str:
    name = local(root.tag)
    if name.startswith("trademark-applications"):
        return USPTO_XML
    if name in {"Transaction", "TradeMark", "TradeMarkDetails", "TradeMarkTransactionBody"}:
        return EUIPO_XML
    raise ProviderDataError(
        path, f"not a USPTO nor an EUIPO trademark file (root <{root.tag}>); give --format"
    )


def _text(element: Element | None) -> str:
    return " ".join((element.text or "").split()) if element is not None else ""


def uspto_record(case: Element) -> BulkRecord:
    number = _text(case.find("serial-number"))
    header = case.find("case-file-header")
    words = _text(header.find("mark-identification")) if header is not None else ""
    drawing = _text(header.find("mark-drawing-code")) if header is not None else ""
    ended = header is not None and any(
        _text(header.find(name)) for name in ("abandonment-date", "cancellation-date")
    )
    if ended:
        return BulkRecord("USPTO", number, None, DEAD)
    if drawing[:1] in _WORDLESS_DRAWINGS:
        return BulkRecord("USPTO", number, None, NOT_WORDS)
    if not words:
        return BulkRecord("USPTO", number, None, NO_TEXT)
    classes = _classes(
        _text(code) for code in case.iterfind("classifications/classification/international-code")
    )
    owners = [_text(name) for name in case.iterfind("case-file-owners/case-file-owner/party-name")]
    owner = next((name for name in reversed(owners) if name), "")
    return BulkRecord("USPTO", number, Mark(words, owner, "USPTO", classes, number))


def euipo_record(mark: Element) -> BulkRecord:
    fields: dict[str, str] = {}
    classes: list[str] = []
    for element in mark.iter():
        name = local(element.tag)
        if name == "ClassNumber":
            classes.append(_text(element))
        elif name not in fields:
            fields[name] = _text(element)
    number = fields.get("ApplicationNumber", "")
    status = fields.get("MarkCurrentStatusCode", "").lower()
    if (mark.get("operationCode") or "").lower() == "delete":
        return BulkRecord("EUIPO", number, None, DELETED)
    if "pending" not in status and status.endswith(_DEAD_ENDINGS):
        return BulkRecord("EUIPO", number, None, DEAD)
    words = fields.get("MarkVerbalElementText", "")
    if not words:
        return BulkRecord(
            "EUIPO", number, None, NOT_WORDS if fields.get("MarkFeature") else NO_TEXT
        )
    return BulkRecord("EUIPO", number, Mark(words, "", "EUIPO", _classes(classes), number))


def _classes(codes: Iterator[str] | list[str]) -> tuple[str, ...]:
    """Nice classes as the marks file writes them: "009" is "9"; each once, in order."""
    seen: dict[str, None] = {}
    for code in codes:
        plain = code.lstrip("0") or code
        if plain:
            seen.setdefault(plain, None)
    return tuple(seen)


_RECORD_READERS: dict[str, Callable[[Element], BulkRecord]] = {
    USPTO_XML: uspto_record,
    EUIPO_XML: euipo_record,
}
