"""The portfolio report on a hand-made portfolio: renewals per month, money at risk, value,
realised and unrealised profit with ROI, verdict counts."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime

from dominus.portfolio.model import Outcome, PortfolioEntry
from dominus.portfolio.report import REPORT_COLUMNS, build_report, report_rows

NOW = datetime(2030, 11, 15, 23, 30, tzinfo=UTC)

BASE = PortfolioEntry(
    id=1, domain="example.com", tld="com", acquired_at=date(2029, 3, 1),
    renewal_date=date(2030, 12, 1), acquisition_cost=100.0, renewal_cost=10.0, currency="USD",
    registrar=None, current_score=50.0, expected_value=300.0, confidence=0.5,
    suggested_list_price=450.0, list_price=None, score_details=None, verdict="keep",
    verdict_reason="", verdict_at=None, scored_at=None, notes=None, status="active",
    renewals_paid=20.0, created_at=NOW, updated_at=NOW,
)  # fmt: skip


def test_report_figures() -> None:
    entries = [
        BASE,
        # past due: counted in the current month; a drop verdict: money at risk
        replace(BASE, id=2, domain="example.net", renewal_date=date(2030, 11, 2), verdict="drop",
                renewal_cost=12.0, acquisition_cost=8.0, renewals_paid=0.0, expected_value=None,
                suggested_list_price=None, acquired_at=None),
        # eleven months on, unknown renewal cost (no price known for .ru), drop
        replace(BASE, id=3, domain="example.ru", tld="ru", renewal_date=date(2031, 10, 31),
                verdict="drop", renewal_cost=None, acquired_at=date(2030, 1, 1)),
        # beyond the 12 months
        replace(BASE, id=4, domain="example.io", renewal_date=date(2031, 11, 1), verdict=None),
        replace(BASE, id=5, domain="sold.com", status="sold"),
    ]  # fmt: skip
    outcomes = [
        Outcome(1, "sold.com", "sold", 1500.0, "USD", date(2030, 5, 1), None, 225.0, 120.0,
                None, NOW),
        Outcome(2, "gone.com", "dropped", None, "USD", date(2030, 6, 1), None, None, 8.0, None,
                NOW),
        Outcome(3, "other.com", "sold", 999.0, "USD", date(2030, 7, 1), None, None, None, None,
                NOW),  # never held: no cost basis, left out
    ]  # fmt: skip
    report = build_report(entries, outcomes, "USD", NOW)
    due = {month["month"]: month for month in report["renewals_due"]}
    months = list(due)
    assert (months[0], months[-1], len(months)) == ("2030-11", "2031-10", 12)
    assert (due["2030-11"]["renewals"], due["2030-11"]["cost"]) == (1, 12.0)
    assert (due["2030-12"]["renewals"], due["2030-12"]["cost"]) == (1, 10.0)
    assert (due["2031-10"]["renewals"], due["2031-10"]["unknown_cost"]) == (1, 1)
    assert report["money_at_risk"] == {
        "names": 2, "renewal_cost": 12.0, "unknown_cost": 1, "sunk_cost": 8.0 + 120.0,
        "sunk_cost_unknown": 0,
    }  # fmt: skip
    assert report["value"] == {
        "names": 4, "acquisition_cost": 100 + 8 + 100 + 100, "unknown_acquisition_cost": 0,
        "suggested_list_value": 450.0 * 3, "unscored": 1,
    }  # fmt: skip
    # 2030: sold 1500 − 225 = 1275 proceeds on 120; dropped 0 on 8 → profit 1147 on 128
    assert report["realised"] == [
        {"year": 2030, "sold": 1, "dropped": 1, "counted": 2, "cost_unknown": 0,
         "proceeds": 1275.0, "cost": 128.0, "profit": 1147.0, "roi": round(1147 / 128, 4)},
    ]  # fmt: skip
    # scored active names: example.com and example.io acquired 2029 (EV 300, cost 120 each),
    # example.ru acquired 2030 (EV 300, cost 120)
    assert report["unrealised"] == [
        {"year": "2029", "names": 2, "counted": 2, "cost_unknown": 0, "expected_value": 600.0,
         "cost": 240.0, "profit": 360.0, "roi": 1.5},
        {"year": "2030", "names": 1, "counted": 1, "cost_unknown": 0, "expected_value": 300.0,
         "cost": 120.0, "profit": 180.0, "roi": 1.5},
    ]  # fmt: skip
    assert report["verdicts"] == {"keep": 1, "drop": 2, "reprice": 0, "none": 1}
    rows = report_rows(report)
    assert rows[0][:2] == ["renewals_due", "2030-11"] and rows[-1][:3] == ["verdicts", "none", 1]


def test_names_matching_a_mark_come_first_in_their_own_section() -> None:
    blocked = {"trademark": {"checked": True, "verdict": "blocked", "mark": "Netflix",
                             "rule": "exact", "source": "marks.csv"}}  # fmt: skip
    entries = [
        BASE,
        replace(BASE, id=2, domain="netflix-deals.com", score_details=blocked, verdict="keep"),
        replace(
            BASE, id=3, domain="cleared.com", score_details={"trademark": {"verdict": "clear"}}
        ),
        replace(BASE, id=4, domain="sold-netflix.com", score_details=blocked, status="sold"),
    ]
    report = build_report(entries, [], "USD", NOW)
    assert list(report)[:3] == ["currency", "as_of", "trademark_risk"]
    assert report["trademark_risk"] == [
        {"domain": "netflix-deals.com", "mark": "Netflix", "rule": "exact", "verdict": "keep"}
    ]
    rows = report_rows(report)
    assert rows[0] == [
        "trademark_risk", "netflix-deals.com", 1, None, None, None, None,
        "UDRP risk: matches mark 'Netflix' (rule: exact)",
    ]  # fmt: skip
    assert rows[1][0] == "renewals_due"


def test_a_cost_that_is_unknown_is_left_out_and_counted() -> None:
    """Three sales in 2030, two of names whose acquisition cost was never given: one stored by
    the ledger as $0 (as it once was), one as unknown. ROI is on the one sale with a cost."""
    unknown = replace(BASE, acquisition_cost=None, renewals_paid=0.0, status="sold")
    entries = [
        replace(BASE, id=1, domain="known.com", status="sold"),
        replace(unknown, id=2, domain="free-once.com"),
        replace(unknown, id=3, domain="unknown.com"),
        # active: EV 300, cost unknown; left out of the unrealised profit
        replace(BASE, id=4, domain="active.com", acquisition_cost=None),
        replace(BASE, id=5, domain="dropping.com", acquisition_cost=None, verdict="drop"),
    ]
    outcomes = [
        Outcome(1, "known.com", "sold", 140.0, "USD", date(2030, 5, 1), None, 0.0, 100.0, None,
                NOW),
        Outcome(2, "free-once.com", "sold", 500.0, "USD", date(2030, 6, 1), None, 0.0, 0.0,
                None, NOW),
        Outcome(3, "unknown.com", "sold", 900.0, "USD", date(2030, 7, 1), None, 0.0, None,
                None, NOW),
        Outcome(4, "never-held.com", "sold", 999.0, "USD", date(2030, 7, 1), None, None, None,
                None, NOW),
    ]  # fmt: skip
    report = build_report(entries, outcomes, "USD", NOW)
    assert report["realised"] == [
        {"year": 2030, "sold": 3, "dropped": 0, "counted": 1, "cost_unknown": 2,
         "proceeds": 140.0, "cost": 100.0, "profit": 40.0, "roi": 0.4},
    ]  # fmt: skip
    # active.com and dropping.com (both acquired 2029, EV 300) have no acquisition cost
    assert report["unrealised"] == [
        {"year": "2029", "names": 2, "counted": 0, "cost_unknown": 2, "expected_value": 0.0,
         "cost": 0.0, "profit": 0.0, "roi": None},
    ]  # fmt: skip
    assert report["money_at_risk"]["sunk_cost"] == 0.0
    assert report["money_at_risk"]["sunk_cost_unknown"] == 1
    realised = next(row for row in report_rows(report) if row[0] == "realised")
    assert realised[-1] == "ROI on 1 of 3; 2 left out: cost unknown"


def test_the_csv_rows_say_what_the_table_says() -> None:
    """ROI as the table prints it (a percentage, one decimal) and every unknown count."""
    entries = [
        BASE,
        replace(BASE, id=2, domain="example.ru", tld="ru", renewal_date=date(2031, 10, 31),
                verdict="drop", renewal_cost=None),
        replace(BASE, id=3, domain="unscored.com", expected_value=None,
                suggested_list_price=None),
        replace(BASE, id=4, domain="known.com", status="sold"),
    ]  # fmt: skip
    outcomes = [
        Outcome(1, "known.com", "sold", 140.0, "USD", date(2030, 5, 1), None, 0.0, 100.0, None,
                NOW),
    ]  # fmt: skip
    report = build_report(entries, outcomes, "USD", NOW)
    rows = {(row[0], row[1]): dict(zip(REPORT_COLUMNS, row, strict=True))
            for row in report_rows(report)}  # fmt: skip
    assert REPORT_COLUMNS[6] == "roi_percent"
    realised = rows[("realised", 2030)]
    assert (realised["profit"], realised["roi_percent"]) == (40.0, 40.0)  # ROI 0.4 is 40.0 %
    assert rows[("renewals_due", "2031-10")]["note"] == "1 with renewal cost unknown"
    assert rows[("money_at_risk", None)]["note"] == "1 with renewal cost unknown"
    assert rows[("value", None)]["note"] == "1 unscored"
