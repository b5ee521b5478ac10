"""`dominus portfolio ...` as a real subprocess on a per-test SQLite file: add, list, show,
verdicts, import (bad input: one line, exit 2, nothing written), CSV export, the ledger, the
report and rescore (--sync, and enqueued)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine

from dominus.config import load_settings
from dominus.jobs import SqlJobStore
from dominus.jobs.clock import utc_now
from dominus.portfolio.model import EntryFields, ScoreUpdate
from dominus.portfolio.service import PortfolioService
from tests.support.api import api_settings
from tests.support.cli import Cli, assert_bad_input

FIXTURES = Path(__file__).parents[1] / "fixtures" / "portfolio"
OFFLINE = {"DOMINUS_PROVIDERS": "sample"}


@pytest.fixture
def cli(tmp_path: Path, database_url: str) -> Iterator[Cli]:
    runner = Cli(tmp_path, database_url)
    yield runner
    runner.kill_leftovers()


def test_add_list_show_and_verdicts(cli: Cli) -> None:
    added = cli.ok(
        "portfolio", "add", "Example.com", "--renewal-date", "2031-01-02",
        "--acquisition-cost", "120", "--registrar", "Example Registrar", "--json",
    ).json()  # fmt: skip
    assert (added["domain"], added["renewal_cost"], added["verdict"]) == (
        "example.com", 18.48, "reprice",
    )  # fmt: skip
    assert added["renewal_price_source"].startswith("highest known retail price: Namecheap")
    listing = cli.ok("portfolio", "list", "--json").json()
    assert [entry["domain"] for entry in listing] == ["example.com"]
    assert "example.com" in cli.ok("portfolio", "list").stdout
    shown = cli.ok("portfolio", "show", "example.com", "--json").json()
    assert shown["history"][0]["to"] == "reprice" and shown["registrar"] == "Example Registrar"
    verdicts = cli.ok("portfolio", "verdicts", "--json").json()
    assert verdicts[0]["verdict"] == "reprice" and verdicts[0]["changed"] is False
    assert "not scored" in verdicts[0]["reason"]


BAD_INPUT = [
    (("add", "example.com", "--renewal-date", "02/01/2031"), ("YYYY-MM-DD",)),
    (("add", "example.com", "--renewal-date", "2031-01-02", "--acquisition-cost", "-3"),
     ("--acquisition-cost", "negative")),
    (("add", "example.com", "--renewal-date", "2031-01-02", "--registrar", "r" * 201),
     ("registrar: longer than 200 characters",)),
    (("add", "example.com", "--renewal-date", "2031-01-02", "--list-price", "1" + "0" * 13),
     ("list_price", "over the largest amount")),
    (("show", "missing.com"), ("missing.com is not in the portfolio",)),
    (("rescore", "--sync", "--wait"), ("exclude each other",)),
]  # fmt: skip


def test_bad_input_is_one_line_and_exit_2(cli: Cli) -> None:
    for args, fragments in BAD_INPUT:
        assert_bad_input(cli.run("portfolio", *args), *fragments)
    assert cli.ok("portfolio", "list", "--json").json() == []


def test_import_refuses_bad_rows_and_writes_nothing(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("domain,expiry date\nexample.com,2031-01-01\nexample.net,03/04/2031\n")
    assert_bad_input(
        cli.run("portfolio", "import", str(bad)),
        "1 invalid row(s), nothing imported",
        "line 3, column 'expiry date'",
        "ambiguous",
    )
    assert cli.ok("portfolio", "list", "--json").json() == []
    missing = cli.run("portfolio", "import", str(bad), "--map", "renewal_date=Renews")
    assert_bad_input(missing, "column 'Renews' (mapped to renewal_date) is not in the header")
    dry = cli.ok("portfolio", "import", str(bad), "--dry-run", "--skip-invalid").stdout
    assert "would be added: example.com" in dry and "refused: line 3" in dry
    assert cli.ok("portfolio", "list", "--json").json() == []
    done = cli.ok("portfolio", "import", str(bad), "--date-format", "%d/%m/%Y", "--json").json()
    assert done["added"] == ["example.com", "example.net"]


def test_import_refuses_a_value_the_api_would_refuse(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "domain,expiry date,notes\nexample.com,2031-01-01,fine\n"
        f"example.net,2031-01-01,{'n' * 10_001}\n"
    )
    assert_bad_input(
        cli.run("portfolio", "import", str(bad)),
        "1 invalid row(s), nothing imported",
        "line 3, column 'notes': longer than 10,000 characters",
    )
    assert cli.ok("portfolio", "list", "--json").json() == []


def test_preset_import_then_csv_export(cli: Cli, tmp_path: Path) -> None:
    report = cli.ok(
        "portfolio", "import", str(FIXTURES / "godaddy.csv"), "--preset", "godaddy", "--json"
    ).json()
    assert sorted(report["added"]) == ["example.com", "example.net"]
    out = tmp_path / "portfolio.csv"
    cli.ok("portfolio", "list", "--csv", str(out))
    data = out.read_bytes()
    assert data.startswith(b"\xef\xbb\xbfdomain,") and b"\r\n" in data
    assert_bad_input(cli.run("portfolio", "list", "--csv", str(out)), "exists", "--force")
    cli.ok("portfolio", "list", "--csv", str(out), "--force")
    again = cli.ok("portfolio", "import", str(out), "--json").json()
    assert again["added"] == [] and again["updated"] == []
    assert sorted(again["unchanged"]) == ["example.com", "example.net"]


def test_ledger_and_report(cli: Cli) -> None:
    cli.ok("portfolio", "add", "example.com", "--renewal-date", "2099-01-02",
           "--acquisition-cost", "100", "--renewals-paid", "20")  # fmt: skip
    cli.ok("portfolio", "add", "example.net", "--renewal-date", "2099-01-02",
           "--acquisition-cost", "8")  # fmt: skip
    sale = cli.ok("portfolio", "sold", "example.com", "--price", "1500", "--fees", "225",
                  "--date", "2024-05-01", "--venue", "Example Market", "--json").json()  # fmt: skip
    assert sale["realised_profit"] == 1155.0  # 1500 − 225 − 100 − 20
    dropped = cli.ok("portfolio", "drop", "example.net", "--date", "2024-06-01", "--json").json()
    assert dropped["sunk_cost"] == 8.0
    report = cli.ok("portfolio", "report", "--json").json()
    (year,) = report["realised"]
    assert (year["year"], year["sold"], year["dropped"]) == (2024, 1, 1)
    # proceeds 1275, cost 120 + 8: profit 1147, ROI 1147 / 128
    assert (year["proceeds"], year["cost"], year["profit"]) == (1275.0, 128.0, 1147.0)
    assert year["roi"] == round(1147 / 128, 4)
    assert len(report["renewals_due"]) == 12
    assert "realised 2024" in cli.ok("portfolio", "report").stdout


def test_rescore_sync_and_enqueued(cli: Cli, store: SqlJobStore) -> None:
    cli.ok("portfolio", "add", "zentrova.com", "--renewal-date", "2031-01-02")
    result = cli.ok("portfolio", "rescore", "--sync", "--json", env=OFFLINE).json()
    assert (result["rescored"], result["errors"]) == (1, [])
    entry = cli.ok("portfolio", "show", "zentrova.com", "--json").json()
    assert entry["current_score"] is not None and entry["suggested_list_price"] is not None
    first = cli.ok("portfolio", "rescore", "zentrova.com", "--json").json()
    second = cli.ok("portfolio", "rescore", "zentrova.com", "--json").json()
    assert first["created"] and not second["created"] and first["job_id"] == second["job_id"]
    job = store.get_job(first["job_id"])
    assert (job.job_type, job.payload) == ("PORTFOLIO_RESCORE", {"domain": "zentrova.com"})


def test_every_reader_shows_the_latest_judgement(
    cli: Cli, engine: Engine, database_url: str, tmp_path: Path
) -> None:
    """Judged ten days ago 4 days before its renewal, then judged again now (the same verdict,
    drop): `verdicts`, `list --json` and the CSV export give today's figures."""
    earlier = utc_now() - timedelta(days=10)
    service = PortfolioService(engine, api_settings(database_url))
    renewal = earlier.date() + timedelta(days=4)
    service.add("example.com", EntryFields(renewal_date=renewal), earlier)
    service.record_score("example.com", ScoreUpdate(50.0, 100.0, 0.8, 150.0, {}), earlier)
    assert "renewal in 4 days" in (service.get("example.com").verdict_reason or "")

    (judged,) = cli.ok("portfolio", "verdicts", "--json").json()
    assert (judged["verdict"], judged["changed"]) == ("drop", False)
    assert "past due" in judged["reason"] and "renewal in 4 days" not in judged["reason"]
    (listed,) = cli.ok("portfolio", "list", "--json").json()
    assert listed["verdict_reason"] == judged["reason"]
    out = tmp_path / "portfolio.csv"
    cli.ok("portfolio", "list", "--csv", str(out))
    exported = out.read_text(encoding="utf-8-sig")
    assert judged["reason"] in exported and "renewal in 4 days" not in exported
    shown = cli.ok("portfolio", "show", "example.com", "--json").json()
    assert [event["to"] for event in shown["history"]] == ["reprice", "drop"]


def test_a_name_matching_a_mark_is_flagged_first_everywhere(cli: Cli, tmp_path: Path) -> None:
    """Rescored with the offline providers (their sample marks list netflix), a held name that
    matches a mark keeps its money verdict but every list, page and export says the mark."""
    for name in ("netflix-deals.com", "zentrova.com"):
        cli.ok("portfolio", "add", name, "--renewal-date", "2031-01-02")
    cli.ok("portfolio", "rescore", "--sync", env=OFFLINE)

    listing = {entry["domain"]: entry for entry in cli.ok("portfolio", "list", "--json").json()}
    flagged, clear = listing["netflix-deals.com"], listing["zentrova.com"]
    assert flagged["trademark"] == {"mark": "netflix", "rule": "exact"}
    assert flagged["verdict_reason"].startswith(
        "UDRP risk: matches mark 'netflix' (rule: exact) · "
    )
    assert clear["trademark"] is None and "UDRP" not in clear["verdict_reason"]
    shown = cli.ok("portfolio", "show", "netflix-deals.com", "--json").json()
    assert shown["trademark"] == flagged["trademark"]
    assert cli.ok("portfolio", "show", "netflix-deals.com").stdout.startswith(
        "⚠ UDRP risk: matches mark 'netflix' (rule: exact)"
    )
    table = cli.ok("portfolio", "list").stdout
    assert "⚠ TM 'netflix'" in table and table.count("⚠ TM") == 1
    judged = {entry["domain"]: entry for entry in cli.ok("portfolio", "verdicts", "--json").json()}
    assert judged["netflix-deals.com"]["trademark"] == {"mark": "netflix", "rule": "exact"}
    assert judged["zentrova.com"]["trademark"] is None

    out = tmp_path / "portfolio.csv"
    cli.ok("portfolio", "list", "--csv", str(out))
    header, *rows = out.read_text(encoding="utf-8-sig").splitlines()
    columns = header.split(",")
    assert {"trademark_mark", "trademark_rule"} <= set(columns)
    by_domain = {row.split(",")[0]: row for row in rows}
    assert ",netflix,exact," in by_domain["netflix-deals.com"]

    report = cli.ok("portfolio", "report", "--json").json()
    assert list(report)[2] == "trademark_risk"
    assert [(r["domain"], r["mark"]) for r in report["trademark_risk"]] == [
        ("netflix-deals.com", "netflix")
    ]
    printed = cli.ok("portfolio", "report").stdout
    assert printed.index("UDRP risk") < printed.index("Renewals due")
    assert "netflix-deals.com" in printed


def test_sales_without_a_cost_are_left_out_of_the_roi(cli: Cli) -> None:
    cli.ok("portfolio", "add", "known.com", "--renewal-date", "2099-01-02",
           "--acquisition-cost", "100")  # fmt: skip
    for name in ("unknown.com", "other.com"):
        cli.ok("portfolio", "add", name, "--renewal-date", "2099-01-02")
    cli.ok("portfolio", "sold", "known.com", "--price", "140", "--date", "2024-05-01")
    sale = cli.ok("portfolio", "sold", "unknown.com", "--price", "900", "--date", "2024-06-01",
                  "--json").json()  # fmt: skip
    assert (sale["realised_profit"], sale["cost"], sale["cost_unknown"]) == (None, None, True)
    said = cli.ok("portfolio", "sold", "other.com", "--price", "500", "--date", "2024-07-01")
    assert "realised profit unknown (cost unknown)" in said.stdout

    (year,) = cli.ok("portfolio", "report", "--json").json()["realised"]
    assert (year["sold"], year["counted"], year["cost_unknown"]) == (3, 1, 2)
    assert (year["profit"], year["cost"], year["roi"]) == (40.0, 100.0, 0.4)
    printed = " ".join(cli.ok("portfolio", "report").stdout.split())
    assert "ROI 40.0 % on 1 of 3 sales; 2 left out: cost unknown" in printed


def test_a_sale_enqueues_the_backtest_build_as_outcomes_add_does(
    cli: Cli, store: SqlJobStore
) -> None:
    cli.ok("portfolio", "add", "example.com", "--renewal-date", "2099-01-02")
    sale = cli.ok("portfolio", "sold", "example.com", "--price", "900", "--json").json()
    job = store.get_job(sale["build_job_id"])
    assert (job.job_type, job.status.value, sale["build_created"]) == (
        "BACKTEST_BUILD", "pending", True,
    )  # fmt: skip
    # The same deduplicated build: `outcomes add` finds the one the ledger enqueued.
    added = cli.ok("outcomes", "add", "example.org", "--price", "50", "--date", "2024-01-02")
    assert f"BACKTEST_BUILD job {job.id} already pending" in added.stdout
    cli.ok("portfolio", "add", "example.net", "--renewal-date", "2099-01-02")
    said = cli.ok("portfolio", "sold", "example.net", "--price", "100").stdout
    assert f"BACKTEST_BUILD job {job.id} already pending" in said


def test_a_sale_or_drop_after_today_is_refused_as_outcomes_add_refuses_it(cli: Cli) -> None:
    tomorrow = (datetime.now(UTC).date() + timedelta(days=1)).isoformat()
    cli.ok("portfolio", "add", "example.com", "--renewal-date", "2099-01-02")
    refusals = [
        cli.run("portfolio", "sold", "example.com", "--price", "900", "--date", tomorrow),
        cli.run("portfolio", "drop", "example.com", "--date", tomorrow),
        cli.run("outcomes", "add", "example.com", "--price", "900", "--date", tomorrow),
    ]
    lines = {assert_bad_input(result, f"date {tomorrow} is after today") for result in refusals}
    assert len(lines) == 1  # one rule, one message
    entry = cli.ok("portfolio", "show", "example.com", "--json").json()
    assert entry["status"] == "active" and entry["history"][-1]["kind"] == "verdict"
    assert cli.ok("outcomes", "list", "--json").json() == []


def test_import_dry_run_names_its_columns_and_the_date_order_from_the_file(cli: Cli) -> None:
    path = str(FIXTURES / "godaddy-us-dates.csv")
    dry = cli.ok("portfolio", "import", path, "--preset", "godaddy", "--dry-run").stdout
    assert "column 'Expiration Date' → renewal_date" in dry
    assert "column 'Auto Renew' → auto_renew" in dry and "column 'Status' → registrar_status" in dry
    assert "columns ignored: 'Created Date', 'Folder', 'Estimated Value'" in dry
    assert "3 would be added" in dry
    mixed = cli.run("portfolio", "import", str(FIXTURES / "mixed-date-orders.csv"))
    assert_bad_input(mixed, "holds day-first (line 2", "month-first (line 3", "--date-format")


def test_auto_renew_and_an_expired_name_in_list_show_and_export(cli: Cli, tmp_path: Path) -> None:
    cli.ok("portfolio", "import", str(FIXTURES / "godaddy-us-dates.csv"), "--preset", "godaddy")
    listing = {entry["domain"]: entry for entry in cli.ok("portfolio", "list", "--json").json()}
    assert (listing["example.com"]["auto_renew"], listing["example.org"]["auto_renew"]) == (
        True, None,
    )  # fmt: skip
    assert listing["example.net"]["registrar_status"] == "Expired"
    table = cli.ok("portfolio", "list").stdout
    net = next(line for line in table.splitlines() if "example.net" in line)
    assert "EXPIRED" in net and "off" in net
    shown = cli.ok("portfolio", "show", "example.net").stdout
    assert shown.splitlines()[0] == "EXPIRED at the registrar (status 'Expired')"
    assert "auto_renew: False" in shown
    out = tmp_path / "out.csv"
    cli.ok("portfolio", "list", "--csv", str(out))
    lines = out.read_text(encoding="utf-8-sig").splitlines()
    assert lines[0].endswith(",auto_renew,registrar_status")
    assert next(line for line in lines if line.startswith("example.net,")).endswith(
        ",false,Expired"
    )
    again = cli.ok("portfolio", "import", str(out), "--json").json()
    assert again["updated"] == [] and len(again["unchanged"]) == 3


def test_the_report_lists_the_drop_names_whose_auto_renew_to_turn_off(
    cli: Cli, engine: Engine
) -> None:
    soon = (datetime.now(UTC).date() + timedelta(days=20)).isoformat()
    names: list[tuple[str, list[str]]] = [
        ("example.com", ["--auto-renew"]),
        ("example.net", ["--no-auto-renew"]),
        ("example.org", []),
        ("example.info", ["--auto-renew"]),
    ]
    for domain, flag in names:
        cli.ok("portfolio", "add", domain, "--renewal-date", soon, "--renewal-cost", "50", *flag)
    # Worth next to nothing, renewing within the horizon: drop (example.info stays unscored).
    service = PortfolioService(engine, load_settings())
    for domain in ("example.com", "example.net", "example.org"):
        service.record_score(domain, ScoreUpdate(5.0, 1.0, 0.5, 2.0, {}), datetime.now(UTC))
    verdicts = {v["domain"]: v["verdict"] for v in cli.ok("portfolio", "verdicts", "--json").json()}
    assert verdicts == {"example.com": "drop", "example.net": "drop", "example.org": "drop",
                        "example.info": "reprice"}  # fmt: skip
    report = cli.ok("portfolio", "report", "--json").json()
    assert [item["domain"] for item in report["turn_off_auto_renew"]] == ["example.com"]
    assert [item["domain"] for item in report["check_auto_renew"]] == ["example.org"]
    text = cli.ok("portfolio", "report").stdout
    assert "turn off auto-renew for these names (verdict drop): 1\n  example.com" in text
    assert "check auto-renew (verdict drop, auto-renew not known): 1\n  example.org" in text


def test_the_owners_registrar_prices_price_their_renewals(cli: Cli, tmp_path: Path) -> None:
    """A registrar the bundled table has no price for (GoDaddy), priced from the owner's own
    table, and the entry names that price; a bad table is refused at start-up with one line,
    exit 2, nothing written."""
    mine = tmp_path / "my-prices.csv"
    mine.write_text(
        "registrar,tld,registration,renewal,transfer,currency,observed_on,date_basis,source,note\n"
        "GoDaddy,com,,24.99,,USD,2026-11-20,published,GoDaddy invoice 2026-11,\n",
        encoding="utf-8",
    )
    env = {"REGISTRAR_PRICES_PATH": str(mine)}
    added = cli.ok(
        "portfolio", "add", "example.com", "--renewal-date", "2031-01-02",
        "--registrar", "GoDaddy.com, LLC", "--json", env=env,
    ).json()  # fmt: skip
    assert added["renewal_cost"] == 24.99
    assert added["renewal_price_source"] == (
        "GoDaddy renewal .com $24.99 (observed 2026-11-20, GoDaddy invoice 2026-11)"
    )
    # without the owner's table the same entry falls back to the dearest known .com price
    shown = cli.ok("portfolio", "show", "example.com", "--json").json()
    assert shown["renewal_price_source"].startswith("highest known retail price: Namecheap")
    mine.write_text("registrar,tld\nGoDaddy,com\n", encoding="utf-8")
    assert_bad_input(
        cli.run("portfolio", "add", "other.com", "--renewal-date", "2031-01-02", env=env),
        "registrar price table",
    )
    listed = cli.ok("portfolio", "list", "--json").json()
    assert [entry["domain"] for entry in listed] == ["example.com"]
