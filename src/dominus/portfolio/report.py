"""`dominus portfolio report`: where the portfolio's money goes and what it earned.

- first, the names held that match a trademark (UDRP risk: the mark and the gate's rule), whatever
  their verdict;
- renewals due per calendar month (UTC) for the next 12 months, with their cost (a past-due
  renewal counts in the current month; an unknown renewal cost is counted, not guessed);
- money at risk: the renewal costs due within 12 months on names whose verdict is drop, beside
  what was already sunk into them;
- the active names' acquisition cost against their suggested list value;
- realised profit and ROI per year of sale or drop (the ledger's outcomes: price − fees − cost
  basis; a drop loses its cost basis), and unrealised profit and ROI per year of acquisition
  (expected value − cost so far, for scored names);
- the verdict counts;
- which renewal prices the costs are (ADR 0046): the owner's own, a registrar's, the highest
  known retail price or the registry at-cost price, counted over the renewals due.
- the drop-verdict names whose auto-renew is on (turn it off) or not known (check it).
A cost that is unknown (no acquisition cost given) is never counted as $0: the name is left out
of the sums and the ROI, and the names left out are counted beside them (`cost_unknown`,
`sunk_cost_unknown`, `unknown_acquisition_cost`).
All amounts in the portfolio's currency (the scoring currency)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from dominus.portfolio.model import Outcome, PortfolioEntry, TrademarkRisk, utc_today
from dominus.portfolio.renewal_prices import default_pricing, entry_renewal_price
from dominus.portfolio.service import entry_cost
from dominus.scoring.renewal_prices import RenewalPricing

MONTHS = 12
RENEWAL_PRICE_KINDS = ("own", "registrar", "highest_retail", "at_cost", "unknown")


def _month_starts(today: date) -> list[date]:
    months = []
    year, month = today.year, today.month
    for _ in range(MONTHS):
        months.append(date(year, month, 1))
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return months


def _cents(value: float) -> float:
    return round(value, 2)


def _roi(profit: float, cost: float) -> float | None:
    return round(profit / cost, 4) if cost > 0 else None


def build_report(
    entries: Sequence[PortfolioEntry],
    outcomes: Sequence[Outcome],
    currency: str,
    now: datetime,
    pricing: RenewalPricing | None = None,
) -> dict[str, Any]:
    """`pricing`: where renewal costs come from (default: the bundled tables)."""
    pricing = pricing or default_pricing()
    today = utc_today(now)
    active = [entry for entry in entries if entry.status == "active"]
    months = _month_starts(today)
    end = (
        date(months[-1].year + 1, 1, 1)
        if months[-1].month == 12
        else date(months[-1].year, months[-1].month + 1, 1)
    )
    due: dict[date, dict[str, Any]] = {
        start: {"month": start.strftime("%Y-%m"), "renewals": 0, "cost": 0.0, "unknown_cost": 0}
        for start in months
    }
    at_risk = {
        "names": 0, "renewal_cost": 0.0, "unknown_cost": 0, "sunk_cost": 0.0,
        "sunk_cost_unknown": 0,
    }  # fmt: skip
    sources: Counter[str] = Counter()
    for entry in active:
        if entry.renewal_date >= end:
            continue
        bucket = due[max(date(entry.renewal_date.year, entry.renewal_date.month, 1), months[0])]
        bucket["renewals"] += 1
        renewal = entry_renewal_price(entry, pricing)
        sources[renewal.kind] += 1
        if renewal.amount is None:
            bucket["unknown_cost"] += 1
        else:
            bucket["cost"] = _cents(bucket["cost"] + renewal.amount)
        if entry.verdict == "drop":
            at_risk["names"] += 1
            sunk = entry_cost(entry)
            if sunk is None:
                at_risk["sunk_cost_unknown"] += 1
            else:
                at_risk["sunk_cost"] = _cents(at_risk["sunk_cost"] + sunk)
            if renewal.amount is None:
                at_risk["unknown_cost"] += 1
            else:
                at_risk["renewal_cost"] = _cents(at_risk["renewal_cost"] + renewal.amount)
    return {
        "currency": currency,
        "as_of": today.isoformat(),
        "trademark_risk": _trademark_risk(active),
        "renewals_due": list(due.values()),
        "money_at_risk": at_risk,
        "renewal_price_sources": {kind: sources[kind] for kind in RENEWAL_PRICE_KINDS},
        "value": _value(active),
        "realised": _realised(outcomes, entries),
        "unrealised": _unrealised(active),
        "verdicts": _verdicts(active),
        **_auto_renew_to_turn_off(active),
    }


def _trademark_risk(active: Sequence[PortfolioEntry]) -> list[dict[str, Any]]:
    """The active names whose last appraisal matched a mark, by domain."""
    return [
        {"domain": entry.domain, **risk.to_dict(), "verdict": entry.verdict}
        for entry in sorted(active, key=lambda entry: entry.domain)
        if (risk := entry.trademark) is not None
    ]


def _value(active: Sequence[PortfolioEntry]) -> dict[str, Any]:
    return {
        "names": len(active),
        "acquisition_cost": _cents(sum(entry.acquisition_cost or 0.0 for entry in active)),
        "unknown_acquisition_cost": sum(1 for e in active if e.acquisition_cost is None),
        "suggested_list_value": _cents(sum(entry.suggested_list_price or 0.0 for entry in active)),
        "unscored": sum(1 for entry in active if entry.suggested_list_price is None),
    }


def _realised(
    outcomes: Sequence[Outcome], entries: Sequence[PortfolioEntry]
) -> list[dict[str, Any]]:
    """Per year of the outcome: the ledger's sales and drops. An outcome with no cost basis and
    no closed entry was never held in the portfolio and is left out. One whose cost is unknown
    (no cost basis, or its entry has no acquisition cost: the ledger once stored that as $0)
    is counted in `sold`/`dropped` and `cost_unknown` but left out of the money and the ROI,
    which are on the `counted` ones."""
    closed = {entry.domain: entry for entry in entries if entry.status != "active"}
    years: dict[int, dict[str, Any]] = defaultdict(
        lambda: {"sold": 0, "dropped": 0, "counted": 0, "cost_unknown": 0, "proceeds": 0.0,
                 "cost": 0.0, "profit": 0.0}
    )  # fmt: skip
    for outcome in outcomes:
        entry = closed.get(outcome.domain)
        if outcome.cost_basis is None and entry is None:
            continue
        year = years[outcome.date.year]
        year["sold" if outcome.type == "sold" else "dropped"] += 1
        cost = outcome.cost_basis
        if cost is None or (entry is not None and entry.acquisition_cost is None):
            year["cost_unknown"] += 1
            continue
        proceeds = (outcome.sale_price or 0.0) - (outcome.fees or 0.0)
        if outcome.type != "sold":
            proceeds = 0.0
        year["counted"] += 1
        year["proceeds"] = _cents(year["proceeds"] + proceeds)
        year["cost"] = _cents(year["cost"] + cost)
        year["profit"] = _cents(year["profit"] + proceeds - cost)
    return [
        {"year": year, **figures, "roi": _roi(figures["profit"], figures["cost"])}
        for year, figures in sorted(years.items())
    ]


def _unrealised(active: Sequence[PortfolioEntry]) -> list[dict[str, Any]]:
    """Per year of acquisition ("unknown" last): expected value − cost so far, for the scored
    names with a known acquisition cost (`counted`); the scored names without one are counted
    in `cost_unknown` and left out of the money and the ROI."""
    years: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"names": 0, "counted": 0, "cost_unknown": 0, "expected_value": 0.0,
                 "cost": 0.0, "profit": 0.0}
    )  # fmt: skip
    for entry in active:
        if entry.expected_value is None:
            continue
        key = str(entry.acquired_at.year) if entry.acquired_at else "unknown"
        year = years[key]
        year["names"] += 1
        cost = entry_cost(entry)
        if cost is None:
            year["cost_unknown"] += 1
            continue
        year["counted"] += 1
        year["expected_value"] = _cents(year["expected_value"] + entry.expected_value)
        year["cost"] = _cents(year["cost"] + cost)
        year["profit"] = _cents(year["profit"] + entry.expected_value - cost)
    ordered = sorted(years, key=lambda key: (key == "unknown", key))
    return [
        {"year": key, **years[key], "roi": _roi(years[key]["profit"], years[key]["cost"])}
        for key in ordered
    ]


def left_out_words(figures: dict[str, Any], total: int) -> str:
    """ "ROI on 1 of 3; 2 left out: cost unknown" (`total`: the names the figures are about)."""
    words = f"ROI on {figures['counted']} of {total}"
    if figures["cost_unknown"]:
        words += f"; {figures['cost_unknown']} left out: cost unknown"
    return words


def _verdicts(active: Sequence[PortfolioEntry]) -> dict[str, int]:
    counts = Counter(entry.verdict or "none" for entry in active)
    return {name: counts.get(name, 0) for name in ("keep", "drop", "reprice", "none")}


def _auto_renew_to_turn_off(active: Sequence[PortfolioEntry]) -> dict[str, Any]:
    """The drop-verdict names the registrar would renew by itself (`turn_off_auto_renew`), and
    those whose auto-renew is not known (`check_auto_renew`), soonest renewal first. A name
    whose auto-renew is off needs nothing: it lapses unless renewed."""

    def listed(entry: PortfolioEntry) -> dict[str, Any]:
        return {
            "domain": entry.domain,
            "renewal_date": entry.renewal_date.isoformat(),
            "renewal_cost": entry.renewal_cost,
        }

    drops = sorted(
        (entry for entry in active if entry.verdict == "drop"),
        key=lambda entry: (entry.renewal_date, entry.domain),
    )
    return {
        "turn_off_auto_renew": [listed(entry) for entry in drops if entry.auto_renew is True],
        "check_auto_renew": [listed(entry) for entry in drops if entry.auto_renew is None],
    }


# The CSV says what `portfolio report` prints: ROI as a percentage (40.0 for 0.4, one decimal,
# as the table writes "40.0 %") and every "unknown" count in `note` (ADR 0051).
REPORT_COLUMNS = ("section", "period", "count", "amount", "cost", "profit", "roi_percent", "note")


def _unknown_note(count: int) -> str | None:
    return f"{count} left out: cost unknown" if count else None


def _notes(*parts: str | None) -> str | None:
    return "; ".join(part for part in parts if part) or None


def _counted(count: int, words: str) -> str | None:
    return f"{count} {words}" if count else None


def roi_percent(roi: float | None) -> float | None:
    return None if roi is None else round(roi * 100, 1)


def _row(
    section: str,
    period: Any,
    count: int,
    *,
    amount: float | None = None,
    cost: float | None = None,
    profit: float | None = None,
    roi: float | None = None,
    note: str | None = None,
) -> list[Any]:
    return [section, period, count, amount, cost, profit, roi_percent(roi), note]


def report_rows(report: dict[str, Any]) -> list[list[Any]]:
    """The report as one flat table, for `--csv`: the trademark risks first (the domain as the
    period, the mark and rule as the note)."""
    rows = [
        _row("trademark_risk", risk["domain"], 1,
             note=TrademarkRisk(risk["mark"], risk["rule"]).words())
        for risk in report["trademark_risk"]
    ]  # fmt: skip
    unknown_renewal = "with renewal cost unknown"
    for month in report["renewals_due"]:
        note = _counted(month["unknown_cost"], unknown_renewal)
        rows.append(_row("renewals_due", month["month"], month["renewals"], cost=month["cost"],
                         note=note))  # fmt: skip
    risk = report["money_at_risk"]
    note = _notes(_counted(risk["unknown_cost"], unknown_renewal),
                  _unknown_note(risk["sunk_cost_unknown"]))  # fmt: skip
    rows.append(_row("money_at_risk", None, risk["names"], amount=risk["renewal_cost"],
                     cost=risk["sunk_cost"], note=note))  # fmt: skip
    value = report["value"]
    note = _notes(_counted(value["unscored"], "unscored"),
                  _unknown_note(value["unknown_acquisition_cost"]))  # fmt: skip
    rows.append(_row("value", None, value["names"], amount=value["suggested_list_value"],
                     cost=value["acquisition_cost"], note=note))  # fmt: skip
    for year in report["realised"]:
        total = year["sold"] + year["dropped"]
        rows.append(_row("realised", year["year"], total, amount=year["proceeds"],
                         cost=year["cost"], profit=year["profit"], roi=year["roi"],
                         note=left_out_words(year, total)))  # fmt: skip
    for year in report["unrealised"]:
        rows.append(_row("unrealised", year["year"], year["names"],
                         amount=year["expected_value"], cost=year["cost"], profit=year["profit"],
                         roi=year["roi"], note=left_out_words(year, year["names"])))  # fmt: skip
    for verdict, count in report["verdicts"].items():
        rows.append(_row("verdicts", verdict, count))
    return rows
