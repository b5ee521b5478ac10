"""Bad input at scale on the command line, on SQLite and on PostgreSQL: hypothesis drives
`dominus` (its real entry point, `dominus.cli.main.main`, in process) with

- JSON-lines files for `dominus enqueue TYPE --from-file`: valid payloads mixed with blank
  lines, text that is no JSON, JSON that is no object, objects the payload model refuses, NaN
  and infinities, escaped NULs, deep nesting, invalid UTF-8, CRLF and missing final newlines.
  A file with one bad line writes nothing (the database is unchanged, row for row) and says
  which line, in one `error:` line, exit 2; a file of good lines makes one job per line;
- argument vectors for every command: real command paths (and broken ones), their options and
  others', values that are numbers out of range, not numbers, JSON, dates, paths, long and
  unusual text. Whatever the vector, no traceback: exit 0, or a documented exit code with a
  message on stderr (2 bad input, 1 a database failure, 3/124 `wait` outcomes, 75 queue full);
  and a refusal (exit 2) writes nothing.

Commands that run until stopped or go to the internet are not invoked (`worker`, `serve`,
`scheduler`, `demo`, `rdap refresh`); `run` is invoked without `--wait`/`--sync`; `jobs wait`,
`runs wait` and any other command given `--wait` (`portfolio rescore`) with a short timeout.
Few examples by default; `--hypothesis-profile=long` for more.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dominus.cli.main import app
from dominus.jobs import SqlJobStore
from dominus.jobs.json_limits import MAX_JSON_DEPTH
from tests.support.cli import Cli, CliResult
from tests.support.database_state import database_digest

# Documented exit codes (dominus.cli.main, `jobs wait`, `runs wait`).
EXIT_CODES = {0, 1, 2, 3, 75, 124}
NOT_INVOKED = {"worker", "serve", "scheduler", "demo", "rdap refresh"}
STRIPPED = {"run": {"--wait", "--sync"}}
WAITS = {"jobs wait", "runs wait"}

# Examples per test unless the `long` profile gives more.
EXAMPLES = 25


@pytest.fixture
def cli(database_url: str, tmp_path: Path) -> Cli:
    runner = Cli(tmp_path, database_url)
    runner.env["DOMINUS_PROVIDERS"] = "sample"
    return runner


def fuzz_settings() -> settings:
    chosen = settings()
    return settings(
        max_examples=max(chosen.max_examples, EXAMPLES),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


def assert_one_error_line(outcome: CliResult) -> str:
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    assert "Traceback" not in outcome.stderr, str(outcome)
    assert lines, f"exit {outcome.code} without a message\n{outcome}"
    return lines[-1]


# --- bulk enqueue ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Line:
    raw: bytes
    good: bool  # a payload diag.sleep accepts
    blank: bool = False


def _good() -> st.SearchStrategy[Line]:
    seconds = st.one_of(st.integers(0, 5), st.floats(0, 5, allow_nan=False))
    payloads = st.one_of(
        st.just({}),
        st.builds(lambda s: {"seconds": s}, seconds),
    )
    return payloads.map(lambda payload: Line(json.dumps(payload).encode(), good=True))


def _bad() -> st.SearchStrategy[Line]:
    deep = st.integers(MAX_JSON_DEPTH + 1, 5000).map(
        lambda depth: '{"seconds": 1, "x": ' + "[" * depth + "]" * depth + "}"
    )
    texts = st.one_of(
        # Never JSON; one line (a line break would make it two).
        st.text(st.characters(blacklist_characters="\n"), max_size=40).map(lambda t: "x" + t),
        st.sampled_from(
            [
                "{",
                '{"seconds": ',
                "[1]",
                "1",
                '"text"',
                "null",
                "true",
                '{"seconds": "soon"}',
                '{"seconds": -1}',
                '{"seconds": 1e400}',
                '{"seconds": NaN}',
                '{"seconds": Infinity}',
                '{"seconds": 1, "unknown": true}',
                '{"seconds": 1, "note": "nul \\u0000 here"}',
                '{"seconds": 1}{"seconds": 2}',
                "\ufeff{}",
            ]
        ),
        deep,
    )
    raw = st.sampled_from([b"\xff\xfe{}", b'{"seconds": 1, "x": "\xc3"}', b"\x00"])
    return st.one_of(
        texts.map(lambda text: Line(text.encode("utf-8", "surrogatepass"), good=False)),
        raw.map(lambda data: Line(data, good=False)),
    )


def _blank() -> st.SearchStrategy[Line]:
    return st.sampled_from(["", "   ", "\t"]).map(
        lambda text: Line(text.encode(), good=False, blank=True)
    )


LINES = st.lists(
    st.one_of(_good(), _good(), _good(), _blank(), _bad()),
    min_size=1,
    max_size=30,
)


def job_count(store: SqlJobStore) -> int:
    return len(store.list_jobs(limit=100_000))


@pytest.mark.backends("sqlite", "postgresql")
@given(lines=LINES, crlf=st.booleans(), final_newline=st.booleans())
@settings(fuzz_settings())
def test_a_bulk_enqueue_writes_every_line_or_nothing(
    cli: Cli, store: SqlJobStore, lines: list[Line], crlf: bool, final_newline: bool
) -> None:
    path = cli.cwd / "payloads.jsonl"
    end = b"\r\n" if crlf else b"\n"
    path.write_bytes(end.join(line.raw for line in lines) + (end if final_newline else b""))
    before_count, before = job_count(store), database_digest(store.engine)

    outcome = cli("enqueue", "diag.sleep", "--diagnostic-jobs", "--from-file", str(path))

    assert "Traceback" not in outcome.stderr, str(outcome)
    bad = [number for number, line in enumerate(lines, 1) if not (line.good or line.blank)]
    good = sum(1 for line in lines if line.good)
    if not bad:
        assert outcome.code == 0, str(outcome)
        assert outcome.stdout.strip() == str(good), str(outcome)
        assert job_count(store) == before_count + good
        return
    assert outcome.code == 2, str(outcome)
    message = assert_one_error_line(outcome)
    assert message.startswith("error: "), str(outcome)
    first = f"the first bad line is {bad[0]}: {message}\n{lines}"
    assert re.search(rf"line {bad[0]}\b", message), first
    assert job_count(store) == before_count
    assert database_digest(store.engine) == before, "a refused file wrote something"


# --- every command's arguments ---------------------------------------------------------------


def command_paths() -> dict[str, list[Any]]:
    """Every leaf command ("jobs list", "enqueue"...) and its parameters."""
    found: dict[str, list[Any]] = {}

    def walk(command: Any, path: list[str]) -> None:
        children = getattr(command, "commands", None)
        if children:
            for name, child in children.items():
                walk(child, [*path, name])
        else:
            found[" ".join(path)] = list(command.params)

    walk(typer.main.get_command(app), [])
    return found


COMMANDS = command_paths()
FUZZED = sorted(name for name in COMMANDS if name not in NOT_INVOKED)
OPTIONS = sorted(
    {opt for params in COMMANDS.values() for param in params for opt in getattr(param, "opts", [])}
    - {"--help"}
)
VALUES = st.one_of(
    st.sampled_from(
        [
            "",
            "0",
            "1",
            "2",
            "-1",
            "3.5",
            "1e309",
            "-1e309",
            "nan",
            "inf",
            "99999999999999999999999",
            "-9223372036854775809",
            "{}",
            "[]",
            '{"seconds": 0.01}',
            '{"fail_times": 1}',
            '{"a": [[[[[]]]]]}',
            "null",
            "not json",
            "2030-01-01T00:00:00",
            "2030-01-01T00:00:00Z",
            "2030-02-30T00:00:00+00:00",
            "yesterday",
            "diag.noop",
            "diag.sleep",
            "diag.crash",
            "PIPELINE_RUN",
            "pending",
            "running",
            "completed",
            "failed",
            "backup",
            "prune",
            "example.com",
            "xn--nxasmq6b.com",
            "a..b",
            "-",
            "--",
            "out.csv",
            "sub/dir/out.csv",
            "/dev/null",
            ".",
            "sqlite:///copy.db",
            "postgresql+psycopg://nobody@127.0.0.1:1/none",
            "x" * 300,
            "\u202etxt.exe",
            "\U0001f4a5",
            "ﬁ",
        ]
    ),
    st.integers().map(str),
    st.floats().map(str),
    st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00")),
    # Bytes that are not UTF-8 reach Python's argv as lone surrogates (surrogateescape), the
    # way `dominus jobs list --type $'\xff'` passes them.
    st.text(st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF), min_size=1, max_size=3).map(
        lambda escaped: "a" + escaped
    ),
)


IDS = st.one_of(st.sampled_from(["1", "2", "3", "0", "-1", "999999"]), VALUES)


def _options_of(command: str) -> set[str]:
    return {opt for param in COMMANDS[command] for opt in param.opts}


@st.composite
def argument_vectors(draw: st.DrawFn) -> list[str]:
    """Mostly well-formed: a real command, its arguments (sometimes missing), some of its
    options with values of any kind; now and then a stray token or another command's option,
    or no command at all."""
    if draw(st.integers(0, 19)) == 0:
        head = draw(st.sampled_from([[], ["jobs"], ["nothing"], ["jobs", "nothing"], ["--help"]]))
        return [*head, *draw(st.lists(VALUES, max_size=3))]
    command = draw(st.sampled_from(FUZZED))
    tokens: list[str] = []
    for param in COMMANDS[command]:
        if param.param_type_name == "argument":
            count = (
                draw(st.integers(0, 3))
                if param.nargs == -1
                else draw(st.sampled_from([1] * 9 + [0]))
            )
            tokens += [draw(IDS) for _ in range(count)]
        elif param.opts[0] not in STRIPPED.get(command, set()) and draw(st.booleans()):
            tokens += [param.opts[0]] if param.is_flag else [param.opts[0], draw(VALUES)]
    if draw(st.integers(0, 4)) == 0:
        stray = draw(st.one_of(VALUES, st.sampled_from(OPTIONS)))
        tokens.insert(draw(st.integers(0, len(tokens))), stray)
    tokens = [token for token in tokens if token not in STRIPPED.get(command, set())]
    if command in WAITS or ("--wait" in tokens and "--wait" in _options_of(command)):
        # No worker runs here: a wait would never end. The last --timeout given wins.
        tokens += ["--timeout", "0.05"]
    return [*command.split(), *tokens]


@pytest.mark.backends("sqlite", "postgresql")
@given(argv=argument_vectors())
@settings(fuzz_settings())
def test_no_argument_vector_crashes_the_cli(cli: Cli, store: SqlJobStore, argv: list[str]) -> None:
    before = database_digest(store.engine)
    outcome = cli(*argv)
    assert outcome.code in EXIT_CODES, f"{argv}\n{outcome}"
    assert "Traceback" not in outcome.stderr + outcome.stdout, f"{argv}\n{outcome}"
    if outcome.code != 0 and not _help_shown(argv, outcome):
        assert_one_error_line(outcome)
    if outcome.code == 2:
        assert database_digest(store.engine) == before, f"{argv} was refused but wrote\n{outcome}"


def _help_shown(argv: list[str], outcome: CliResult) -> bool:
    """A group named without a command (`dominus`, `dominus jobs`) prints its help (the
    commands it has) and exits 2, as Click does: that is its message."""
    groups = {"", *(name.split()[0] for name in COMMANDS if " " in name)}
    return " ".join(argv) in groups and outcome.code == 2 and "Usage" in outcome.stdout


def test_the_fuzzed_commands_are_the_cli_s_commands() -> None:
    """The vocabulary comes from the app itself: a new command is fuzzed without a change here,
    and the ones left out are only those that never return or go to the internet."""
    assert {"enqueue", "jobs list", "dlq requeue", "runs candidates", "score"} <= set(FUZZED)
    assert set(COMMANDS) >= NOT_INVOKED
    assert "--from-file" in OPTIONS and "--payload" in OPTIONS


# Found by the fuzz: bytes that are not UTF-8 ($'\xff' in a shell) reached the database driver,
# which cannot encode the lone surrogate Python decodes them to: a traceback, exit 1.
@pytest.mark.backends("sqlite", "postgresql")
@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["jobs", "list", "--type", "diag\udcff"], "--type is not UTF-8 text"),
        (
            ["enqueue", "diag.noop", "--diagnostic-jobs", "--dedupe-key", "key\udcff"],
            "dedupe_key is not UTF-8 text",
        ),
    ],
    ids=["jobs-list-type", "enqueue-dedupe-key"],
)
def test_arguments_that_are_not_utf8_are_bad_input(
    cli: Cli, store: SqlJobStore, argv: list[str], fragment: str
) -> None:
    before = database_digest(store.engine)
    outcome = cli(*argv)
    assert outcome.code == 2, str(outcome)
    assert outcome.stdout == "", str(outcome)
    assert assert_one_error_line(outcome).startswith(f"error: {fragment}"), str(outcome)
    assert database_digest(store.engine) == before


# Found by the fuzz: the file was parsed to the end before any payload was checked, so a line
# that is not JSON was reported even when an earlier line held a payload the job type refuses.
@pytest.mark.backends("sqlite", "postgresql")
def test_a_bulk_enqueue_names_the_first_bad_line_whatever_is_wrong_with_it(
    cli: Cli, store: SqlJobStore
) -> None:
    path = cli.cwd / "payloads.jsonl"
    path.write_bytes(b'{"seconds": 1}\n{"seconds": -1}\n{}\n\n\xff not text\n')
    outcome = cli("enqueue", "diag.sleep", "--diagnostic-jobs", "--from-file", str(path))
    assert outcome.code == 2, str(outcome)
    message = assert_one_error_line(outcome)
    assert re.search(r"line 2\b", message) and "greater than or equal to 0" in message, message
    assert job_count(store) == 0
