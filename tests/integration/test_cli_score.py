"""`dominus score DOMAIN…`, run as a real subprocess against a per-test SQLite file: the panel,
the `--json` documents, the listing options and bad input (one line, exit 2)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dominus.jobs import utc_now
from dominus.pipeline.scoring_sets import weight_sets_of
from tests.support.cli import Cli, CliResult, assert_bad_input

APPRAISAL_KEYS = {
    "domain",
    "unicode_domain",
    "acquisition",
    "listed_price",
    "tier",
    "tier_reason",
    "recommended",
    "gates",
    "keyword_looked_up",
    "trademark",
    "availability",
    "weights",
    "providers",
    "data_sources",
    "sample_data",
    "appraised_on",
    "currency",
    "score",
}


@pytest.fixture
def cli(tmp_path: Path, database_url: str) -> Iterator[Cli]:
    runner = Cli(tmp_path, database_url)
    yield runner
    runner.kill_leftovers()


def documents(result: CliResult) -> list[dict[str, Any]]:
    assert result.code == 0, str(result)
    found = result.json()
    assert isinstance(found, list)
    for document in found:
        assert set(document) == APPRAISAL_KEYS
    return found


def test_a_brandable_name_with_nothing_behind_it_is_speculative(cli: Cli) -> None:
    result = cli.ok("score", "--sample", "zentrova.com")
    out = result.stdout
    assert "zentrova.com · SPECULATIVE" in out
    assert "SAMPLE DATA" in out
    assert "only the intrinsic signal (no keyword data, 0 of 3 comparable sales" in out
    assert "no evidence beyond the name itself" in out
    assert "expected profit" in out and "retail P50" in out  # the money gate, in dollars
    assert "availability: availability not checked" in out
    assert "trademark: clear" in out

    (document,) = documents(cli.run("score", "--sample", "zentrova.com", "--json"))
    assert document["tier"] == "speculative" and document["recommended"] is False
    assert document["sample_data"] is True
    assert document["acquisition"] == "registration"
    assert document["score"]["confidence"] == pytest.approx(0.2)
    assert document["score"]["gates"]["evidence"] is False


def test_a_keyword_name_shows_its_evidence_and_every_figure_of_the_money_gate(cli: Cli) -> None:
    (document,) = documents(cli.run("score", "--sample", "homeinsurance.com", "--json"))
    score = document["score"]
    assert document["keyword_looked_up"] == "home insurance"
    assert score["evidence"]["keyword"] == {
        "keyword": "home insurance",
        "monthly_volume": 135000,
        "cpc": 24.5,
        "counts": True,
    }
    sales = score["market"]["sales"]
    assert score["market"]["evidence"] is True and len(sales) >= 3
    for sale in sales:
        assert {"domain", "price", "date", "weight", "shared_words"} <= set(sale)
    money = score["money"]
    assert money["acquisition_cost"] == 10.46 and money["holding_cost"] == 31.38
    assert money["expected_profit"] == pytest.approx(
        round(money["expected_revenue"] - money["holding_cost"], 2)
    )
    assert {"p_sale", "sell_through_rate", "sale_commission", "buy_max"} <= set(money)
    assert score["score_threshold"] > 0 and score["confidence_threshold"] > 0
    assert document["tier"] == "recommended"
    assert document["tier_reason"] == score["tier_reason"]
    assert document["tier_reason"].startswith("every gate passes: evidence: keyword 135,000")

    out = cli.ok("score", "--sample", "homeinsurance.com").stdout
    assert "homeinsurance.com · RECOMMENDED" in out
    assert "'home insurance': 135,000 searches/month, CPC $24.50" in out
    assert "comparable sales used (market evidence)" in out
    assert "insuremyhome.net" in out and "$1,900.00" in out  # a sale used, with its price
    assert f"${score['expected_value']:,.2f}" in out
    assert "holding cost (3 years)" in out and "$31.38" in out
    assert "buy max" in out


def test_a_closeout_with_a_price_is_appraised_as_a_purchase(cli: Cli) -> None:
    args = ("score", "--sample", "oldgardentools.com", "--price", "1850", "--age", "17.5")
    (document,) = documents(cli.run(*args, "--backlinks", "340", "--wayback", "210", "--json"))
    assert document["acquisition"] == "purchase" and document["listed_price"] == 1850
    money = document["score"]["money"]
    assert money["purchase"] is True
    assert money["acquisition_cost"] == 1850
    assert money["holding_cost"] == pytest.approx(1850 + 3 * 10.46)
    assert document["score"]["evidence"]["expiry"] == {
        "age_years": 17.5,
        "backlinks": 340,
        "wayback_snapshots": 210,
        "counts": True,
    }
    assert document["tier"] == "rejected"
    assert document["tier_reason"].startswith("expected profit −$")
    assert "a listed name is bought" in document["availability"]["note"]

    out = cli.ok(*args).stdout
    assert "acquisition: purchase from a listing at $1,850.00" in out
    assert "oldgardentools.com · REJECTED" in out


def test_a_name_resembling_a_mark_is_rejected(cli: Cli) -> None:
    (document,) = documents(cli.run("score", "--sample", "applestore.com", "--json"))
    assert document["tier"] == "rejected"
    assert document["tier_reason"].startswith("trademark: blocked by mark apple")


def test_availability_is_checked_only_when_asked(cli: Cli) -> None:
    (unchecked,) = documents(cli.run("score", "--sample", "solarpanels.com", "--json"))
    assert unchecked["availability"]["checked"] is False
    assert unchecked["tier"] == "recommended"
    args = ("score", "--sample", "solarpanels.com", "--check-availability", "--json")
    (checked,) = documents(cli.run(*args))
    assert checked["availability"]["verdict"] == "registered"  # the sample's registered.txt
    assert checked["tier"] == "rejected"
    assert checked["tier_reason"].startswith("not available to register")


def test_several_names_give_a_list_in_order(cli: Cli) -> None:
    found = documents(cli.run("score", "--sample", "zentrova.com", "Bücher.com", "--json"))
    assert [d["domain"] for d in found] == ["zentrova.com", "xn--bcher-kva.com"]
    assert found[1]["unicode_domain"] == "bücher.com"


def test_names_from_a_file_are_appraised_in_one_process_in_order(cli: Cli, tmp_path: Path) -> None:
    names = tmp_path / "names.txt"
    names.write_text("# watched names\nzentrova.com\n\nvoice.com  # a headline sale\n")
    found = documents(
        cli.run("score", "--sample", "solarpanels.com", "--from-file", str(names), "--json")
    )
    assert [d["domain"] for d in found] == ["solarpanels.com", "zentrova.com", "voice.com"]
    for document in found:
        value = document["score"]["value"]
        assert set(value) >= {"wholesale", "retail", "model", "contributions", "comparables"}
        assert document["score"]["expected_value"] == value["retail"]["p50"]
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing here\n")
    assert_bad_input(cli.run("score", "--from-file", str(empty)), "give a DOMAIN")
    assert_bad_input(cli.run("score", "--from-file", str(tmp_path / "missing.txt")), "cannot read")


def test_a_headline_name_is_not_valued_at_the_old_anchor(cli: Cli) -> None:
    """voice.com sold for $30M (2019): the value model must not value it like any short .com at
    the old $500 anchor (retail P50 at least $100,000)."""
    (document,) = documents(cli.run("score", "--sample", "voice.com", "--json"))
    assert document["score"]["value"]["retail"]["p50"] >= 100_000


def test_the_active_weight_set_and_the_settings_providers_are_used(
    cli: Cli, tmp_path: Path, database_url: str, engine: Any
) -> None:
    weights = {"intrinsic": 0.5, "commercial": 0.3, "market": 0.1, "expiry": 0.1}
    set_id = weight_sets_of(engine).add("tuned", weights, "test", utc_now())
    keywords = tmp_path / "keywords.csv"
    keywords.write_text("keyword,monthly_volume,cpc\ncloud nest,5400,2.10\n", encoding="utf-8")
    env = {"DOMINUS_PROVIDERS": "real", "KEYWORD_DATA_PATH": str(keywords)}
    (document,) = documents(cli.run("score", "cloudnest.com", "--json", env=env))
    assert document["weights"] == {"weight_set_id": set_id, "name": "tuned", "weights": weights}
    assert document["sample_data"] is False
    assert document["score"]["evidence"]["keyword"]["monthly_volume"] == 5400
    # No marks file configured: unverified, so not recommended, whatever the score says.
    assert document["trademark"]["verdict"] == "unverified"
    assert document["tier"] != "recommended"
    assert "SAMPLE DATA" not in cli.ok("score", "cloudnest.com", env=env).stdout


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (("bad..name",), ["invalid domain 'bad..name'", "empty label"]),
        (("zentrova",), ["invalid domain 'zentrova'", "no TLD"]),
        (("ok.com", "--", "-x-.com"), ["invalid domain '-x-.com'"]),
        (("ok.com", "--age", "abc"), ["--age 'abc' is not a number"]),
        (("ok.com", "--age", "300"), ["ok.com: age 300.0", "less than or equal to 200"]),
        (("ok.com", "--age", "-1"), ["ok.com: age -1.0", "greater than or equal to 0"]),
        (("ok.com", "--price", "inf"), ["--price 'inf' is not a finite number"]),
        (("ok.com", "--backlinks", "2.5"), ["--backlinks '2.5' is not a whole number"]),
        (("a.com", "b.com", "--price", "5"), ["describe one listing", "not 2"]),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    cli: Cli, args: tuple[str, ...], fragments: list[str]
) -> None:
    assert_bad_input(cli.run("score", "--sample", *args), *fragments)
