"""The candidate tables of `dominus run`, `runs show` and `runs candidates`, built from the
candidate documents (the `--json` shapes), so a table shows what the JSON says.

Whole-currency amounts for the estimates (they are not cent-accurate; `--json` has the cents),
expected profit to the cent (it is small by design). Cells are kept whole (names, prices): on a
narrow terminal the table wraps rather than cutting them; only a reason wraps inside its cell."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.table import Table
from rich.text import Text

from dominus.pipeline.stage_results import REGISTRATION

SPECULATIVE_TITLE = (
    "Speculative (name only, no market/keyword/expiry evidence: not recommendations)"
)
Document = Mapping[str, Any]
Column = tuple[str, bool]  # heading, right-aligned
REASON_MIN_WIDTH = 30


def recommendations_table(documents: Sequence[Document], title: str) -> Table:
    """Recommended names by expected profit, each with the evidence that backed it (the list
    price and the weighted score are in `--json` and `runs candidates`)."""
    columns = [
        ("domain", False),
        ("acquire", False),
        ("profit", True),
        ("EV", True),
        ("buy max", True),
        ("conf.", True),
        ("evidence", False),
        ("confirmed by", False),
    ]
    cells = [
        [
            document["domain"],
            acquisition_cell(document),
            _cents(document["expected_profit"]),
            _whole(document["expected_value"]),
            _whole(document["suggested_buy_max"]),
            f"{document['confidence']:.2f}",
            document["evidence"] or "-",
            document["availability_source"] or "-",
        ]
        for document in documents
    ]
    return _table(title, columns, cells)


def speculative_table(documents: Sequence[Document]) -> Table:
    """Names with only their intrinsic signal: shown apart, never among the recommendations."""
    columns = [
        ("domain", False),
        ("acquire", False),
        ("EV", True),
        ("score", True),
        ("conf.", True),
        ("confirmed by", False),
    ]
    cells = [
        [
            document["domain"],
            acquisition_cell(document),
            _whole(document["expected_value"]),
            f"{document['weighted_score']:.3f}",
            f"{document['confidence']:.2f}",
            document["availability_source"] or "-",
        ]
        for document in documents
    ]
    return _table(SPECULATIVE_TITLE, columns, cells)


def listing_table(documents: Sequence[Document], title: str) -> Table:
    """Scored candidates of every tier, with the stage that settled each and the reason."""
    columns = [
        ("domain", False),
        ("tier", False),
        ("stage", False),
        ("acquire", False),
        ("profit", True),
        ("EV", True),
        ("buy max", True),
        ("conf.", True),
        ("evidence", False),
        ("trademark", False),
        ("confirmed by", False),
    ]
    cells = [
        [
            document["domain"],
            document["tier"],
            document["stage"],
            acquisition_cell(document),
            _cents(document["expected_profit"]),
            _whole(document["expected_value"]),
            _whole(document["suggested_buy_max"]),
            f"{document['confidence']:.2f}",
            document["evidence"] or "-",
            _trademark(document["trademark"]),
            document["availability_source"] or "-",
        ]
        for document in documents
    ]
    return _table(title, columns, cells, [document["tier_reason"] for document in documents])


def dropped_table(documents: Sequence[Document], title: str) -> Table:
    """Candidates that never got a score: the stage that stopped each, and why."""
    columns = [("domain", False), ("source", False), ("acquire", False), ("stage", False)]
    cells = [
        [
            document["domain"] or repr(document["input"]),
            document["source"],
            acquisition_cell(document) if document["acquisition"] else "-",
            document["stage"],
        ]
        for document in documents
    ]
    return _table(title, columns, cells, [document["dropped_reason"] for document in documents])


def acquisition_cell(document: Document) -> str:
    """A hand-registration reads "register"; a purchase "buy" and its listed price."""
    if document.get("acquisition", REGISTRATION) == REGISTRATION:
        return "register"
    price = document.get("listed_price")
    return "buy (no price)" if price is None else f"buy at {price:,.0f}"


def rejected_line(summary: Mapping[str, Any], shown: int = 5) -> str | None:
    """ "rejected 14: negative expected profit 8, trademark: blocked 5, ..." (None: the run's
    summary predates tiers)."""
    tiers = summary.get("tiers")
    if not isinstance(tiers, Mapping):
        return None
    reasons = list((summary.get("rejected_reasons") or {}).items())[:shown]
    line = f"rejected {tiers.get('rejected', 0)}"
    if reasons:
        line += ": " + ", ".join(f"{label} {count}" for label, count in reasons)
    return line


def _table(
    title: str, columns: list[Column], cells: list[list[str]], reasons: list[str] | None = None
) -> Table:
    """Every column as wide as its widest cell, except `reason` (when given), which folds."""
    table = Table(title=title)
    for index, (heading, right) in enumerate(columns):
        widest = max([len(heading), *(len(cell[index]) for cell in cells)])
        table.add_column(
            heading, justify="right" if right else "left", no_wrap=True, min_width=widest
        )
    if reasons is None:
        for cell in cells:
            table.add_row(*map(Text, cell))  # Text: a cell is never read as Rich markup
        return table
    table.add_column("reason", overflow="fold", min_width=REASON_MIN_WIDTH)
    for cell, reason in zip(cells, reasons, strict=True):
        table.add_row(*map(Text, [*cell, reason]))
    return table


def _trademark(trademark: Mapping[str, Any]) -> str:
    mark = trademark.get("mark")
    return str(trademark.get("verdict")) + (f" ({mark})" if mark else "")


def _whole(value: float) -> str:
    return f"{value:,.0f}"


def _cents(value: float | None) -> str:
    return "-" if value is None else f"{value:,.2f}"
