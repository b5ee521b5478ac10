"""Writing an export where the user said: never over an existing file unless asked to, and a
failure is one line naming the path (and what is wrong with it), not a traceback."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path

from dominus.errors import InvalidInputError


class ExportPathError(InvalidInputError):
    """The export cannot be written where it was asked to go."""


def write_text_file(path: Path, chunks: Iterable[str], *, force: bool) -> None:
    """Write the chunks (UTF-8; the text carries its own BOM and line ends) to `path`. Without
    `force` an existing file is refused; the file is created exclusively, so one that appears
    meanwhile is refused too. A write that fails midway removes what it wrote."""
    if path.is_dir():
        raise ExportPathError(f"cannot write {path}: it is a directory")
    try:
        handle = open(path, "w" if force else "x", encoding="utf-8", newline="")  # noqa: SIM115
    except FileExistsError:
        raise ExportPathError(f"{path} exists: pass --force to overwrite it") from None
    except OSError as error:
        raise ExportPathError(_cannot_write(path, error)) from None
    try:
        with handle:
            for chunk in chunks:
                handle.write(chunk)
    except OSError as error:
        _remove(path)
        raise ExportPathError(_cannot_write(path, error)) from None
    except BaseException:
        _remove(path)
        raise


def _cannot_write(path: Path, error: OSError) -> str:
    if isinstance(error, FileNotFoundError):
        return f"cannot write {path}: directory {path.parent} does not exist"
    if isinstance(error, PermissionError):
        return f"cannot write {path}: permission denied"
    if isinstance(error, IsADirectoryError):
        return f"cannot write {path}: it is a directory"
    if isinstance(error, NotADirectoryError):
        return f"cannot write {path}: {path.parent} is not a directory"
    return f"cannot write {path}: {error.strerror or error}"


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
