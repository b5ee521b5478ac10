"""The JSON documents of portfolio entries and history events (CLI `--json` and the API)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from dominus.portfolio.model import HistoryEvent, PortfolioEntry, days_until_renewal


def _iso(value: Any) -> Any:
    return None if value is None else value.isoformat()


def entry_document(entry: PortfolioEntry, now: datetime) -> dict[str, Any]:
    return {
        "domain": entry.domain,
        "tld": entry.tld,
        "status": entry.status,
        "renewal_date": entry.renewal_date.isoformat(),
        "days_until_renewal": days_until_renewal(entry.renewal_date, now),
        "acquired_at": _iso(entry.acquired_at),
        "acquisition_cost": entry.acquisition_cost,
        "renewal_cost": entry.renewal_cost,
        "renewals_paid": entry.renewals_paid,
        "currency": entry.currency,
        "registrar": entry.registrar,
        "list_price": entry.list_price,
        "current_score": entry.current_score,
        "expected_value": entry.expected_value,
        "confidence": entry.confidence,
        "suggested_list_price": entry.suggested_list_price,
        "verdict": entry.verdict,
        "verdict_reason": entry.verdict_reason,
        "verdict_at": _iso(entry.verdict_at),
        "scored_at": _iso(entry.scored_at),
        "score_details": entry.score_details,
        "notes": entry.notes,
        "created_at": entry.created_at.isoformat(),
        "updated_at": entry.updated_at.isoformat(),
    }


def history_document(event: HistoryEvent) -> dict[str, Any]:
    return {
        "kind": event.kind,
        "from": event.old_verdict,
        "to": event.new_verdict,
        "method": event.method,
        "reason": event.reason,
        "at": event.at.isoformat(),
    }
