"""An investor's month, end to end through the CLI: 54 names imported from GoDaddy, Namecheap and
Dynadot exports (each in its registrar's own format), their asking prices from a Sedo listing
export, scored offline on the investor's own keyword, sales and marks files, and judged again ten
days after a first judgement. Every reason is today's, the name that matches a mark is flagged
first, every renewal is priced from the owner's export or a registrar's price table (never the
registry's at-cost price), and the user's files are the ones used."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from dominus.jobs.clock import utc_now
from dominus.portfolio.service import PortfolioService
from tests.support.api import api_settings
from tests.support.cli import Cli

WORDS = [
    "brightlane", "zentrova", "quillmark", "novaridge", "tidepool", "ambergate", "copperleaf",
    "silverfern", "maplecrest", "harborline", "lumenfield", "cedarpath", "wavecrest", "pinegrove",
    "starforge", "bluequarry", "irongate", "mossbank", "sunvale", "foxmeadow", "oakspire",
    "rivermint", "stonebrook", "cloudhaven", "goldcrest", "ashwood", "brightwell", "clearpeak",
    "deepwater", "elmstead", "fairhaven", "glenmore", "hollowbrook", "ivyfield", "juniperhill",
    "kestrelway", "larkspur", "meadowlark", "northwind", "orchardview", "pebblecreek",
    "quarrystone", "redfern", "saltmarsh", "thornbury", "upland", "valewood", "willowbend",
    "yarrowfield", "zephyrline", "solarpanels", "taxsoftware", "tinyhomes",
]  # fmt: skip
TLDS = ["com", "net", "org", "io", "co", "xyz", "app", "dev", "shop", "store", "online", "biz"]
MARKED = "chatgptpro.com"

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def names() -> list[str]:
    """54 names: 53 invented ones over a dozen TLDs, and one that contains a user's mark."""
    invented = [f"{word}.{TLDS[index % len(TLDS)]}" for index, word in enumerate(WORDS)]
    return [MARKED, *invented]


def renewal_day(index: int, today: date) -> date:
    """Spread over the next year; the second name is six days past due today (four days ahead
    at the first judgement, ten days ago)."""
    return today - timedelta(days=6) if index == 1 else today + timedelta(days=5 + index * 6)


def write_godaddy(path: Path, rows: list[tuple[str, date]]) -> None:
    header = (
        "Domain Name,Status,Created Date,Expiration Date,Auto Renew,Folder,Renewal Price,"
        "Estimated Value,Registrant Name,Registrant Email"
    )
    lines = [header] + [
        f'{name},Active,2021-03-04,{day.isoformat()},On,Main,$ 22.99,"$1,200",'
        "Jane Example,jane@example.invalid"
        for name, day in rows
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_namecheap(path: Path, rows: list[tuple[str, date]]) -> None:
    lines = ["Domain Name,Expiration Date,Auto-Renew"] + [
        f"{name},{day.strftime('%b')} {day.day} {day.year},{'ON' if i % 2 else 'OFF'}"
        for i, (name, day) in enumerate(rows)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_dynadot(path: Path, rows: list[tuple[str, date]]) -> None:
    header = "Domain,Expiration Date,Registration Date,Registration Date,Auto Renew,Folder,Note"
    lines = [header] + [
        f"{name},{day.strftime('%Y/%m/%d')} 11:43 PST,2020/02/01 09:00 PST,1580576400,"
        f"{'yes' if i % 3 else 'no'},(no folder),"
        for i, (name, day) in enumerate(rows)
    ]
    path.write_text("\ufeff" + "\n".join(lines) + "\n", encoding="utf-8")


def write_sedo(path: Path, listed: list[str]) -> None:
    lines = ["Domain;Price;Minimum Offer;Currency;Currency"] + [
        f"{name};{2500 + 100 * i};0;USD;USD" for i, name in enumerate(listed)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_own_data(folder: Path) -> dict[str, str]:
    """The investor's own files (their formats in docs/data-sources.md): a marks file listing
    `chatgpt`, keyword volumes, and comparable sales; the settings that point at them."""
    marks = folder / "marks.csv"
    marks.write_text("mark,owner,registry,classes\nchatgpt,OpenAI,USPTO,9;42\n", encoding="utf-8")
    keywords = folder / "keywords.csv"
    keywords.write_text(
        "keyword,monthly_volume,cpc\nsolar panels,90500,6.20\ntax software,27100,9.70\n"
        "tiny homes,60500,1.05\n",
        encoding="utf-8",
    )
    comps = folder / "comps.csv"
    comps.write_text(
        "domain,price,currency,sale_date,venue\nsolarquote.com,4200,USD,2025-04-12,Sedo\n"
        "taxhelper.com,3100,USD,2025-02-02,Afternic\nhomesmall.com,900,USD,2024-11-20,GoDaddy\n",
        encoding="utf-8",
    )
    return {
        "DOMINUS_PROVIDERS": "offline",
        "TRADEMARK_MARKS_PATH": str(marks),
        "KEYWORD_DATA_PATH": str(keywords),
        "COMPS_DATA_PATH": str(comps),
    }


@pytest.fixture
def cli(tmp_path: Path, database_url: str) -> Iterator[Cli]:
    runner = Cli(tmp_path, database_url)
    yield runner
    runner.kill_leftovers()


def test_an_investors_portfolio_judged_again_ten_days_later(
    cli: Cli, engine: Engine, database_url: str, tmp_path: Path
) -> None:
    started = utc_now()
    today = started.date()
    everything = names()
    rows = [(name, renewal_day(index, today)) for index, name in enumerate(everything)]
    exports = {"godaddy": rows[:18], "namecheap": rows[18:36], "dynadot": rows[36:]}
    writers = {"godaddy": write_godaddy, "namecheap": write_namecheap, "dynadot": write_dynadot}
    own_data = write_own_data(tmp_path)
    for preset, part in exports.items():
        path = tmp_path / f"{preset}.csv"
        writers[preset](path, part)
        imported = cli.ok(
            "portfolio", "import", str(path), "--preset", preset, "--json", env=own_data
        )
        assert sorted(imported.json()["added"]) == sorted(name for name, _ in part), imported.stdout
    listed_on_sedo = everything[40:46]
    sedo = tmp_path / "sedo.csv"
    write_sedo(sedo, listed_on_sedo)
    cli.ok("portfolio", "import", str(sedo), "--preset", "sedo", env=own_data)

    # The first judgement, ten days ago; then the rescore and the judgement of today.
    service = PortfolioService(engine, api_settings(database_url))
    service.refresh_verdicts(started - timedelta(days=10))
    cli.ok("portfolio", "rescore", "--sync", env=own_data)
    judged = {row["domain"]: row for row in cli.ok("portfolio", "verdicts", "--json").json()}
    entries: dict[str, Any] = {
        entry["domain"]: entry for entry in cli.ok("portfolio", "list", "--json").json()
    }
    assert set(entries) == set(everything) and len(entries) == 54

    for name, entry in entries.items():
        reason = entry["verdict_reason"]
        assert reason == judged[name]["reason"], name
        assert "not scored yet" not in reason, (name, reason)
        assert entry["scored_at"] is not None, name
        # Every renewal has a price, and says which: the owner's export (GoDaddy's renewal
        # price), the registrar's row of the price table, else the dearest known retail price
        # (never below the registry's at-cost price).
        assert not entry["renewal_price_source"].startswith("no renewal"), name
        assert entry["renewal_cost"] is not None, name
    past_due = entries[rows[1][0]]["verdict_reason"]
    assert "past due" in past_due and "renewal in 4 days" not in past_due, past_due

    # The name that matches the investor's mark, flagged first everywhere.
    flagged = entries[MARKED]
    assert flagged["trademark"]["mark"] == "chatgpt"
    assert flagged["verdict_reason"].startswith("UDRP risk: matches mark 'chatgpt'")
    assert [name for name, entry in entries.items() if entry["trademark"]] == [MARKED]
    report = cli.ok("portfolio", "report", "--json").json()
    assert [risk["domain"] for risk in report["trademark_risk"]] == [MARKED]

    # What each export said: GoDaddy's renewal price, Namecheap's auto-renew, Sedo's prices.
    for name, _ in exports["godaddy"]:
        assert entries[name]["renewal_cost"] == 22.99, name
    assert entries[exports["namecheap"][1][0]]["auto_renew"] is True
    assert entries[exports["namecheap"][0][0]]["auto_renew"] is False
    assert all(entries[name]["list_price"] is not None for name in listed_on_sedo)
