"""A package's public names, imported on first use rather than with the package.

`import dominus.scoring.settings` runs `dominus/scoring/__init__.py` first; were that to import
the whole engine (and with it numpy), every process that reads its settings would pay for it,
`dominus --help` and `dominus queue stats` included. A package instead lists where each name
lives and sets `__getattr__ = exported_from({...})` (PEP 562), importing the names under
TYPE_CHECKING for the type checker."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def exported_from(names_of: Mapping[str, tuple[str, ...]]) -> Callable[[str], object]:
    """A module `__getattr__` for the names of `names_of` (module → names it exports)."""
    module_of = {name: module for module, names in names_of.items() for name in names}

    def attribute(name: str) -> object:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return attribute
