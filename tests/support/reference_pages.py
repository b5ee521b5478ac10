"""The documentation's generated reference pages, as the site build writes them
(docs/hooks/reference.py, loaded from its file: it is an MkDocs hook, not a package module)."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from tests.support.transcripts import ROOT

HOOK = ROOT / "docs" / "hooks" / "reference.py"


def reference_hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dominus_docs_reference", HOOK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def settings_reference_page() -> str:
    page: str = reference_hook().settings_page()
    return page
