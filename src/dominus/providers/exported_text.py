"""Reading text files as another tool exported them: whatever their encoding (UTF-8, with or
without a BOM, or UTF-16 as Google Ads writes its downloads) and delimiter (comma or tab), as a
stream of lines, never whole.

The shared CSV rules (`csvfiles`) hold DOMINUS's own files to UTF-8 and commas; an export is
taken as it comes, and a line that still cannot be read is an error naming the file and line.
"""

from __future__ import annotations

import codecs
import csv
from collections.abc import Iterator
from pathlib import Path

from dominus.providers.csvfiles import MAX_LINE_BYTES
from dominus.providers.errors import ProviderDataError

# Characters, not bytes: a UTF-16 line takes two bytes a character.
MAX_LINE_CHARS = MAX_LINE_BYTES // 2
_SNIFF_BYTES = 4096


def encoding_of(path: Path) -> str:
    """The file's encoding, from its byte-order mark, or (none) from where the NUL bytes fall:
    ASCII text in UTF-16 has one in every other byte."""
    try:
        with path.open("rb") as file:
            head = file.read(_SNIFF_BYTES)
    except FileNotFoundError:
        raise ProviderDataError(path, "file not found") from None
    except OSError as exc:
        raise ProviderDataError(path, f"cannot read ({exc.strerror or exc})") from exc
    if head.startswith(codecs.BOM_UTF16_LE):
        return "utf-16"  # the codec reads the mark and drops it
    if head.startswith(codecs.BOM_UTF16_BE):
        return "utf-16"
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    pairs = len(head) // 2
    if pairs and head[1::2].count(0) > pairs * 0.9 and head[0::2].count(0) < pairs * 0.1:
        return "utf-16-le"
    if pairs and head[0::2].count(0) > pairs * 0.9 and head[1::2].count(0) < pairs * 0.1:
        return "utf-16-be"
    return "utf-8"


def text_lines(path: Path, encoding: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, line without its end), decoded as `encoding`, read as a stream."""
    number = 0
    try:
        with path.open(encoding=encoding, newline="") as file:
            while line := file.readline(MAX_LINE_CHARS + 1):
                number += 1
                if len(line) > MAX_LINE_CHARS:
                    raise ProviderDataError(
                        path, f"line longer than {MAX_LINE_CHARS:,} characters", number
                    )
                yield number, line.removesuffix("\n").removesuffix("\r")
    except UnicodeDecodeError as exc:
        raise ProviderDataError(path, f"not {encoding} text ({exc.reason})", number + 1) from None
    except FileNotFoundError:
        raise ProviderDataError(path, "file not found") from None
    except OSError as exc:
        raise ProviderDataError(path, f"cannot read ({exc.strerror or exc})") from exc


def split_fields(path: Path, number: int, line: str, delimiter: str) -> list[str]:
    """The stripped fields of one line, strictly parsed (quotes must close on the line)."""
    if "\x00" in line:
        raise ProviderDataError(path, "contains a NUL character", number)
    try:
        fields = next(csv.reader([line], delimiter=delimiter, strict=True))
    except csv.Error as exc:
        raise ProviderDataError(path, f"malformed line ({exc})", number) from None
    return [field.strip() for field in fields]


def delimiter_of(line: str) -> str:
    """Tab when the line has one (Google Ads' downloads), else comma."""
    return "\t" if "\t" in line else ","
