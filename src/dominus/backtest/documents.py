"""JSON documents of outcomes (CLI --json and the API share them)."""

from __future__ import annotations

from typing import Any

from dominus.portfolio.model import Outcome


def outcome_document(outcome: Outcome) -> dict[str, Any]:
    return {
        "id": outcome.id,
        "domain": outcome.domain,
        "type": outcome.type,
        "price": outcome.sale_price,
        "currency": outcome.currency,
        "date": outcome.date.isoformat(),
        "venue": outcome.venue,
        "fees": outcome.fees,
        "cost_basis": outcome.cost_basis,
        "notes": outcome.notes,
        "created_at": outcome.created_at.isoformat(),
    }
