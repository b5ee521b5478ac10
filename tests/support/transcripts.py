"""The command transcripts the documentation shows, read so a test can run them.

A transcript is a fenced block marked `console` in README.md or a page under docs/:

    ```console
    $ dominus queues pause mail
    queue mail: paused
    $ DOMINUS_LOG_LEVEL=DEBUG dominus queues list
    …
    ```

- A line starting `$ ` is a command: `dominus` and its arguments, as a shell would split them,
  optionally after `NAME=value` assignments to the environment; a line ending ` \\` goes on on
  the next one.
- The lines up to the next command are its output: what it prints on stdout, followed by its
  stderr when it fails. A command whose output has a line starting `error:` is expected to
  fail (a non-zero exit code), any other to succeed.
- `…` in an output line stands for any text within that line (ids, times, paths, sizes); a line
  of `…` alone stands for any number of lines, none included.

Each transcript runs from the start against a fresh, migrated SQLite database at the default
`./data/dominus.db` of a scratch working directory, with `COLUMNS=120` (see `WIDTH`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WIDTH = "120"
ANY_TEXT = "…"
_FENCE = re.compile(r"^(\s*)```(\w*)")
_ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=")


@dataclass
class Step:
    command: str  # as shown, after the `$ `
    expected: list[str] = field(default_factory=list)

    @property
    def env_and_args(self) -> tuple[dict[str, str], list[str]]:
        words = shlex.split(self.command)
        env: dict[str, str] = {}
        while words and _ASSIGNMENT.match(words[0]):
            name, _eq, value = words.pop(0).partition("=")
            env[name] = value
        assert words[:1] == ["dominus"], f"not a dominus command: {self.command!r}"
        return env, words[1:]

    @property
    def expects_failure(self) -> bool:
        return any(line.startswith("error:") for line in self.expected)


@dataclass
class Transcript:
    path: Path
    line: int
    steps: list[Step]

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def documentation_files() -> list[Path]:
    docs = sorted(path for path in (ROOT / "docs").rglob("*.md") if "hooks" not in path.parts)
    return [ROOT / "README.md", *docs]


def transcripts(paths: list[Path] | None = None) -> list[Transcript]:
    return [found for path in paths or documentation_files() for found in _read(path)]


def _read(path: Path) -> Iterator[Transcript]:
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent, language = opening.groups()
        body, end = _fenced_body(lines, index + 1)
        if language == "console":
            body = [line.removeprefix(indent) for line in body]
            yield Transcript(path, index + 1, _steps(body, path, index + 1))
        index = end + 1


def _fenced_body(lines: list[str], start: int) -> tuple[list[str], int]:
    for end in range(start, len(lines)):
        if lines[end].strip() == "```":
            return lines[start:end], end
    raise AssertionError(f"unclosed code fence after line {start}")


def _steps(body: list[str], path: Path, line: int) -> list[Step]:
    steps: list[Step] = []
    continued = False
    for text in body:
        if continued:
            steps[-1].command = steps[-1].command.removesuffix("\\") + text.strip()
        elif text.startswith("$ "):
            steps.append(Step(text[2:].strip()))
        elif steps:
            steps[-1].expected.append(text)
        else:
            raise AssertionError(f"{path}:{line}: a console block must start with `$ dominus`")
        continued = text.endswith("\\") and (text.startswith("$ ") or continued)
    return steps


def output_pattern(expected: list[str]) -> re.Pattern[str]:
    """A pattern the whole output must match: each line as shown, `…` standing for any text."""
    parts = []
    for line in _without_trailing_blanks(expected):
        if line.strip() == ANY_TEXT:
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            pieces = [re.escape(piece) for piece in line.rstrip().split(ANY_TEXT)]
            parts.append("[^\n]*?".join(pieces) + r"\n")
    return re.compile("".join(parts))


def normalised(output: str) -> str:
    """The output as compared: trailing spaces and blank lines at the end dropped."""
    lines = _without_trailing_blanks([line.rstrip() for line in output.splitlines()])
    return "".join(line + "\n" for line in lines)


def _without_trailing_blanks(lines: list[str]) -> list[str]:
    kept = list(lines)
    while kept and not kept[-1].strip():
        kept.pop()
    return kept
