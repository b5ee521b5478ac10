"""MkDocs hook: the reference pages, written from the code at every build so they cannot go stale.

- `reference/settings.md`: every field of `dominus.config.Settings`, with its environment
  variable, default and allowed values taken from the pydantic field. What each setting means
  is prose kept in `settings.yml` beside this file (the scoring constants' comes from
  `dominus.scoring.settings.SETTINGS`); a setting the code has and the prose lacks, or the
  other way round, fails the build.
- `reference/cli.md`: every command of the `dominus` Typer app with its usage, arguments and
  options, as `dominus COMMAND --help` prints them.
- `adr/index.md`: every decision record in `docs/adr/`, with its date and status.

`python3 docs/hooks/reference.py DIR` writes the three pages into DIR, to read them unbuilt.
"""

from __future__ import annotations

import html
import re
import sys
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import annotated_types
import typer
import yaml
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File
from pydantic.fields import FieldInfo

from dominus.cli.main import app
from dominus.config import Settings
from dominus.scoring.settings import SETTINGS as SCORING_SETTINGS

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files

HERE = Path(__file__).resolve().parent
MEANINGS = HERE / "settings.yml"
SETTINGS_PAGE = "reference/settings.md"
CLI_PAGE = "reference/cli.md"
ADR_INDEX = "adr/index.md"


class ReferenceError(Exception):
    """The prose and the code disagree: the build stops and says where."""


def on_files(files: Files, config: MkDocsConfig) -> Files:
    try:
        pages = generated_pages(Path(config.docs_dir))
    except ReferenceError as error:
        raise PluginError(f"reference pages: {error}") from error
    for path, content in pages.items():
        files.append(File.generated(config, path, content=content))
    return files


def generated_pages(docs_dir: Path) -> dict[str, str]:
    return {
        SETTINGS_PAGE: settings_page(),
        CLI_PAGE: cli_page(),
        ADR_INDEX: adr_index(docs_dir / "adr"),
    }


# --- settings ---------------------------------------------------------------------------------


def settings_page() -> str:
    sections = _load_sections()
    fields = Settings.model_fields
    prefix = Settings.model_config.get("env_prefix", "")
    scoring_help = {setting.env: setting.help for setting in SCORING_SETTINGS}
    listed: list[str] = []
    lines = [
        "# Settings reference",
        "",
        "Every setting is an environment variable (or a line of a `.env` file in the working",
        "directory), read once when a process starts. A value outside what is allowed stops the",
        "process with the variable's name and the allowed range (exit 2). See",
        "[Configuration](../configuration.md) for how they fit together.",
        "",
        "This page is written from the code at every build (`dominus.config.Settings`):",
        "the names, defaults and allowed values are the ones the program checks.",
        "",
    ]
    for section in sections:
        names = _section_names(section, fields, scoring_help)
        listed += names
        lines += [f"## {section['title']}", ""]
        if section.get("intro"):
            lines += [section["intro"].strip(), ""]
        lines += ["| variable | default | allowed | meaning |", "|---|---|---|---|"]
        for name in names:
            meaning, extra = _meaning(section, name, scoring_help)
            field = fields[name]
            allowed = "; ".join(part for part in (_allowed(field), extra) if part)
            lines.append(
                f"| `{prefix}{name}` | {_default(field)} | {_cell(allowed)} | {_cell(meaning)} |"
            )
        lines.append("")
    _check_coverage(listed, fields)
    return "\n".join(lines)


def _load_sections() -> list[dict[str, Any]]:
    loaded = yaml.safe_load(MEANINGS.read_text(encoding="utf-8"))
    if not isinstance(loaded, list):
        raise ReferenceError(f"{MEANINGS.name}: expected a list of sections")
    return loaded


def _section_names(
    section: dict[str, Any], fields: dict[str, FieldInfo], scoring_help: dict[str, str]
) -> list[str]:
    if section.get("scoring_constants"):
        return [name for name in fields if name in scoring_help]
    names = list(section.get("settings") or {})
    unknown = [name for name in names if name not in fields]
    if unknown:
        raise ReferenceError(
            f"{MEANINGS.name} describes settings the code does not have: {', '.join(unknown)}"
        )
    return names


def _meaning(section: dict[str, Any], name: str, scoring_help: dict[str, str]) -> tuple[str, str]:
    if section.get("scoring_constants"):
        return scoring_help[name], ""
    entry = section["settings"][name]
    if isinstance(entry, dict):
        return str(entry["meaning"]), str(entry.get("allowed", ""))
    return str(entry), ""


def _check_coverage(listed: list[str], fields: dict[str, FieldInfo]) -> None:
    missing = [name for name in fields if name not in listed]
    if missing:
        raise ReferenceError(
            f"settings with no meaning in {MEANINGS.name}: {', '.join(missing)} "
            "(say what each is for there)"
        )
    twice = sorted({name for name in listed if listed.count(name) > 1})
    if twice:
        raise ReferenceError(f"{MEANINGS.name} lists settings twice: {', '.join(twice)}")


def _default(field: FieldInfo) -> str:
    value = field.default
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if value == "":
        return "empty"
    if isinstance(value, float):
        return f"`{value:g}`"
    return f"`{value}`"


def _allowed(field: FieldInfo) -> str:
    choices = _choices(field.annotation)
    if choices:
        return ", ".join(f"`{choice}`" for choice in choices)
    if _is(field.annotation, bool):
        return "`true`, `false`"
    low, high, parts = None, None, []
    for rule in field.metadata:
        if isinstance(rule, annotated_types.Ge):
            low = f"{_number(rule.ge)}"
        elif isinstance(rule, annotated_types.Gt):
            low = f"> {_number(rule.gt)}"
        elif isinstance(rule, annotated_types.Le):
            high = f"{_number(rule.le)}"
        elif isinstance(rule, annotated_types.MinLen) and rule.min_length == 1:
            parts.append("not empty")
        elif getattr(rule, "pattern", None):
            parts.append(f"matching `{rule.pattern}`")
    if low is not None and high is not None:
        parts.insert(0, f"{low}–{high}" if not low.startswith(">") else f"{low}, ≤ {high}")
    elif low is not None:
        parts.insert(0, low if low.startswith(">") else f"≥ {low}")
    elif high is not None:
        parts.insert(0, f"≤ {high}")
    return "; ".join(parts)


def _choices(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) is typing.Literal:
        return typing.get_args(annotation)
    return ()


def _is(annotation: Any, kind: type) -> bool:
    if annotation is kind:
        return True
    if isinstance(annotation, types.UnionType):
        return kind in typing.get_args(annotation)
    return False


def _number(value: Any) -> str:
    if isinstance(value, float) and not value.is_integer():
        return f"{value:g}"
    return f"{int(value):,}"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


# --- command line ---------------------------------------------------------------------------


def cli_page() -> str:
    root = typer.main.get_command(app)
    context = root.context_class(root, info_name="dominus")
    lines = [
        "# Command reference",
        "",
        "Every `dominus` command with its arguments and options, as `dominus COMMAND --help`",
        "prints them. This page is written from the command itself at every build. What the",
        "commands are for, their exit codes and their JSON: [Command line](../cli.md).",
        "",
        _usage(root, context, "dominus"),
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    lines += [
        f"| [`{path}`](#{_slug(path)}) | {_cell(_escaped(command.get_short_help_str(80)))} |"
        for path, command, _context in _commands(root, context, "dominus")
    ]
    lines.append("")
    for path, command, command_context in _commands(root, context, "dominus"):
        lines += _command_section(path, command, command_context)
    return "\n".join(lines)


def _commands(command: Any, context: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    """Every leaf command under `command`, depth first, in the order `--help` lists them."""
    for name in command.list_commands(context):
        sub = command.get_command(context, name)
        sub_context = command.context_class(sub, parent=context, info_name=name)
        sub_path = f"{path} {name}"
        if hasattr(sub, "list_commands"):
            yield from _commands(sub, sub_context, sub_path)
        else:
            yield sub_path, sub, sub_context


def _command_section(path: str, command: Any, context: Any) -> list[str]:
    lines = [f"## {path}", "", _usage(command, context, path), ""]
    if command.help:
        lines += [_escaped(command.help), ""]
    records = [
        (param.param_type_name, record)
        for param in command.get_params(context)
        if (record := param.get_help_record(context)) is not None
    ]
    if records:
        lines += ["| argument or option | meaning |", "|---|---|"]
        lines += [
            f"| `{html.unescape(names)}` | {_cell(_escaped(html.unescape(help_text)))} |"
            for _kind, (names, help_text) in records
        ]
        lines.append("")
    return lines


def _usage(command: Any, context: Any, path: str) -> str:
    pieces = " ".join(command.collect_usage_pieces(context))
    return f"```text\n{path} {pieces}\n```"


def _escaped(text: str) -> str:
    """Help text as Markdown shows it: `*` and `<` literal, line breaks kept as paragraphs."""
    text = html.unescape(text).replace("\b", "")
    text = text.replace("<", "&lt;").replace("*", "\\*")
    return re.sub(r"(?<!\n)\n(?!\n)", " ", text)


def _slug(path: str) -> str:
    return path.replace(" ", "-")


# --- decisions ----------------------------------------------------------------------------


def adr_index(adr_dir: Path) -> str:
    lines = [
        "# Decisions (ADRs)",
        "",
        "Each architecture decision record says what was decided, why, what was measured and",
        "what follows from it. Newest last.",
        "",
        "| ADR | decision | date and status |",
        "|---|---|---|",
    ]
    for path in sorted(adr_dir.glob("[0-9][0-9][0-9][0-9]-*.md")):
        text = path.read_text(encoding="utf-8")
        title = text.splitlines()[0].lstrip("# ").strip()
        decision = re.sub(r"^(ADR )?\d{4}(:| —) ", "", title)
        summary = _date_and_status(text)
        lines.append(f"| {path.name[:4]} | [{_cell(decision)}]({path.name}) | {summary} |")
    lines.append("")
    return "\n".join(lines)


def _date_and_status(text: str) -> str:
    """`2026-11-29, accepted; refined by ADR 0028` from a record's `Date: … Status: …` lines."""
    found = re.search(r"^Date: (\S+?)\. Status: (.+?)(?:\.(?:\s|$)|\n\n)", text, re.M | re.S)
    if found is not None:
        return f"{found.group(1)}, {' '.join(found.group(2).split())}"
    status = re.search(r"^Status: (.+?)(?:\n\n|\Z)", text, re.M | re.S)
    return " ".join(status.group(1).split()) if status else ""


def main(target: str) -> None:
    for name, content in generated_pages(HERE.parent).items():
        path = Path(target) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "site-reference")
