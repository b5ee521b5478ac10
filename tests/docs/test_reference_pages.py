"""The reference pages the site build writes from the code (docs/hooks/reference.py): every
setting with its default and range, every command with its options, every ADR; and a setting
the prose does not describe stops the build instead of going undocumented."""

from __future__ import annotations

from pathlib import Path

import pytest

from dominus.config import Settings
from tests.support.reference_pages import reference_hook
from tests.support.transcripts import ROOT


def test_the_settings_page_lists_every_setting_with_its_default_and_range() -> None:
    page: str = reference_hook().settings_page()
    rows = {line.split(" | ")[0].strip("| `"): line for line in page.splitlines() if "| `" in line}
    assert set(Settings.model_fields) <= set(rows)
    assert rows["WORKER_CONCURRENCY"].startswith("| `WORKER_CONCURRENCY` | `2` | 1–256 |")
    assert "| unset |" in rows["TRADEMARK_MARKS_PATH"]
    assert "`real`, `offline`, `sample`" in rows["DOMINUS_PROVIDERS"]


def test_a_setting_the_prose_does_not_describe_stops_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = reference_hook()
    text = hook.MEANINGS.read_text(encoding="utf-8")
    meanings = tmp_path / "settings.yml"
    meanings.write_text(
        text.replace(
            "    WORKER_CONCURRENCY: jobs one worker runs at once (its thread pool)\n", ""
        ),
        encoding="utf-8",
    )
    monkeypatch.setattr(hook, "MEANINGS", meanings)
    missing = r"no meaning in settings\.yml: WORKER_CONCURRENCY"
    with pytest.raises(hook.ReferenceError, match=missing):
        hook.settings_page()
    meanings.write_text(text + "    NO_SUCH_SETTING: gone\n", encoding="utf-8")
    with pytest.raises(hook.ReferenceError, match="does not have: NO_SUCH_SETTING"):
        hook.settings_page()


def test_the_command_page_has_every_command_and_its_options() -> None:
    page: str = reference_hook().cli_page()
    assert "## dominus runs candidates" in page
    assert "| `--all-columns` |" in page
    assert "## dominus maintenance restore" in page
    assert "[1&lt;=x&lt;=256]" in page or "1<=x<=256" in page  # worker --concurrency's range


def test_the_decisions_page_lists_every_adr() -> None:
    adr_dir = ROOT / "docs" / "adr"
    page: str = reference_hook().adr_index(adr_dir)
    for path in adr_dir.glob("[0-9]*.md"):
        assert f"]({path.name})" in page
