"""The exception tree drawn in `dominus.errors`'s docstring is the tree of the classes: every
`DominusError` subclass of the package appears once, under its first base, with the module it is
defined in; and every feature error is one of the three kinds the API and the CLI map."""

from __future__ import annotations

import importlib
import pkgutil
import re

import dominus
import dominus.errors
from dominus.errors import ConflictError, DominusError, InvalidInputError, NotFoundError

# Errors of the engine and of the process, not of a feature: they keep their own kinds.
NOT_A_FEATURE = ("dominus.errors",)
KINDS = (NotFoundError, ConflictError, InvalidInputError)
_LINE = re.compile(
    r"^    (?P<indent>[│ ]*)(?:[├└]── )?(?P<name>\w+)"
    r"(?: \(\+(?P<more>[\w, ]+)\))?\s*(?P<module>[\w.]*)$"
)


def every_error_class() -> set[type[DominusError]]:
    for module in pkgutil.walk_packages(dominus.__path__, "dominus."):
        if ".migrations." not in module.name:
            importlib.import_module(module.name)
    found: set[type[DominusError]] = set()
    waiting = [DominusError]
    while waiting:
        for subclass in waiting.pop().__subclasses__():
            if subclass.__module__.startswith("dominus.") and subclass not in found:
                found.add(subclass)
                waiting.append(subclass)
    return found


def drawn_tree() -> dict[str, tuple[str | None, str, set[str]]]:
    """Each class drawn: its parent in the drawing, its module, its other bases."""
    doc = dominus.errors.__doc__ or ""
    drawn: dict[str, tuple[str | None, str, set[str]]] = {}
    parents: list[str] = []
    for line in doc.splitlines():
        match = _LINE.match(line)
        if match is None or not match.group("name").endswith("Error"):
            continue
        depth = len(match.group("indent")) // 4 + (0 if line.strip() == "DominusError" else 1)
        name = match.group("name")
        del parents[depth:]
        parent = parents[-1] if parents else None
        assert name not in drawn, f"{name} is drawn twice"
        more = {part.strip() for part in (match.group("more") or "").split(",") if part.strip()}
        drawn[name] = (parent, match.group("module") or "dominus.errors", more)
        parents.append(name)
    return drawn


def test_the_drawn_tree_is_the_tree_of_the_classes() -> None:
    drawn = drawn_tree()
    classes = every_error_class()
    assert set(drawn) == {cls.__name__ for cls in classes} | {"DominusError"}
    for cls in classes:
        parent, module, more = drawn[cls.__name__]
        first, *others = [base for base in cls.__bases__ if issubclass(base, DominusError)]
        assert parent == first.__name__, cls
        assert module == cls.__module__, cls
        assert more == {base.__name__ for base in others}, cls


def test_every_feature_error_is_one_of_the_three_kinds() -> None:
    outside = [
        cls
        for cls in every_error_class()
        if cls.__module__ not in NOT_A_FEATURE
        and not issubclass(cls, KINDS)
        and not any(issubclass(kind, cls) for kind in KINDS)
    ]
    # A feature's own base (PortfolioError) is allowed when each of its subclasses is a kind.
    bases = [cls for cls in outside if all(issubclass(sub, KINDS) for sub in cls.__subclasses__())]
    assert [cls for cls in outside if cls not in bases or not cls.__subclasses__()] == []
