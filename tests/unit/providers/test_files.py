"""The CSV loaders and the offline provider set on the bundled sample data."""

from __future__ import annotations

import json
import logging
from datetime import date
from pathlib import Path

import pytest

from dominus.pipeline.closeout_csv import read_closeout_csv
from dominus.providers.comparable_sales import load_comparable_sales
from dominus.providers.dns import RegisteredNamesDns
from dominus.providers.errors import ProviderDataError
from dominus.providers.keyword_data import load_keyword_data
from dominus.providers.models import Availability, Mark
from dominus.providers.offline import SAMPLE_DATA_DIR, SAMPLE_INPUT_PATH, offline_providers
from dominus.providers.rdap import RecordsRdap
from dominus.providers.rdap_bootstrap import RdapBootstrap
from dominus.providers.trademarks import MarksFileSource, load_marks


def write(tmp_path: Path, text: str, name: str = "data.csv", bom: bool = False) -> Path:
    path = tmp_path / name
    path.write_bytes(("\ufeff" if bom else "").encode() + text.encode("utf-8"))
    return path


def test_marks_with_bom_comments_and_class_separators(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "# a comment\n\nmark,owner,registry,classes\nApple,Apple Inc.,USPTO,9;35 42\n"
        'nike,"Nike, Inc.",,\n',
        bom=True,
    )
    assert load_marks(path) == [
        Mark("Apple", "Apple Inc.", "USPTO", ("9", "35", "42")),
        Mark("nike", "Nike, Inc.", "", ()),
    ]


def test_marks_source_missing_file_is_unavailable(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        assert MarksFileSource(tmp_path / "absent.csv").marks() is None
    assert "file not found" in caplog.text


def test_keywords_lower_cased_and_last_row_wins(tmp_path: Path) -> None:
    path = write(
        tmp_path, "keyword,monthly_volume,cpc\nSolar  Panels,100,1.5\nsolar panels,200,2\n"
    )
    stats = load_keyword_data(path)
    assert list(stats) == ["solar panels"]
    assert stats["solar panels"].monthly_volume == 200
    assert stats["solar panels"].cpc == 2.0


def test_comparable_sales(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "domain,price,currency,sale_date,venue\nExample.COM,1500.50,usd,2021-03-04,Sedo\n",
    )
    (sale,) = load_comparable_sales(path)
    assert (sale.domain, sale.price, sale.currency) == ("example.com", 1500.5, "USD")
    assert sale.sale_date == date(2021, 3, 4)
    assert sale.venue == "Sedo"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("keyword,cpc\nfoo,1\n", "line 1: header must name the columns"),
        ("", "no header line"),
        ("keyword,monthly_volume,cpc,extra\n", "unknown column(s) extra"),
        (
            "keyword,monthly_volume,cpc\nfoo,lots,1\n",
            "line 2: monthly_volume 'lots' is not a number",
        ),
        (
            "keyword,monthly_volume,cpc\nfoo,10,-1\n",
            "line 2: cpc '-1' must be a finite, non-negative",
        ),
        ("keyword,monthly_volume,cpc\n# c\nfoo,10,nan\n", "line 3: cpc 'nan' must be"),
        ("keyword,monthly_volume,cpc\nfoo,1.5,1\n", "must be a whole number"),
        ("keyword,monthly_volume,cpc\nfoo,1\n", "line 2: expected 3 fields, found 2"),
        ("keyword,monthly_volume,cpc\n,1,1\n", "keyword is empty"),
    ],
)
def test_keyword_errors_name_file_line_and_problem(tmp_path: Path, text: str, problem: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ProviderDataError) as caught:
        load_keyword_data(path)
    assert str(path) in caught.value.message
    assert problem in caught.value.message


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("a.com,100,USD,2021-13-01,Sedo", "sale_date '2021-13-01' is not a date"),
        ("a.com,-5,USD,2021-01-01,Sedo", "price '-5' must be"),
        ("a.com,5,dollars,2021-01-01,Sedo", "not a three-letter code"),
        ("a.com,inf,USD,2021-01-01,Sedo", "price 'inf' must be"),
    ],
)
def test_sales_errors(tmp_path: Path, row: str, problem: str) -> None:
    path = write(tmp_path, f"domain,price,currency,sale_date,venue\n{row}\n")
    with pytest.raises(ProviderDataError, match="line 2") as caught:
        load_comparable_sales(path)
    assert problem in caught.value.message


def test_missing_file_is_a_data_error(tmp_path: Path) -> None:
    with pytest.raises(ProviderDataError, match="file not found"):
        load_comparable_sales(tmp_path / "nope.csv")


def test_records_rdap(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "domain,status,registered_at,expires_at\nheld.com,registered,2001-01-02,\n",
    )
    records = RecordsRdap(path)
    held = records.lookup("HELD.com")
    assert held.availability is Availability.REGISTERED
    assert held.registered_at == date(2001, 1, 2)
    assert held.expires_at is None
    assert records.lookup("other.com").availability is Availability.AVAILABLE
    bad = write(tmp_path, "domain,status,registered_at,expires_at\nx.com,maybe,,\n", "bad.csv")
    with pytest.raises(ProviderDataError, match="line 2: status 'maybe'"):
        RecordsRdap(bad)


def test_listed_domains_follow_the_run_input_rules(tmp_path: Path) -> None:
    """A name listed in Unicode meets the candidate's ASCII form (and the reverse)."""
    registered = RegisteredNamesDns(write(tmp_path, "Bücher.com\nxn--e1afmkfd.xn--p1ai\n"))
    assert registered.check("xn--bcher-kva.com").availability is Availability.REGISTERED
    assert registered.check("пример.рф").availability is Availability.REGISTERED
    records = RecordsRdap(
        write(tmp_path, "domain,status,registered_at,expires_at\nBÜCHER.com.,registered,,\n")
    )
    assert records.lookup("xn--bcher-kva.com").availability is Availability.REGISTERED
    sales = write(tmp_path, "domain,price,currency,sale_date\nbücher.de,100,USD,2021-01-01\n")
    assert [sale.domain for sale in load_comparable_sales(sales)] == ["xn--bcher-kva.de"]


@pytest.mark.parametrize("domain", ["xn--ls8h.com", "xn--a.com", "a..com", "💩.com"])
def test_an_invalid_listed_domain_is_a_data_error(tmp_path: Path, domain: str) -> None:
    problem = f"line 3: domain {domain!r} is not a valid domain"
    with pytest.raises(ProviderDataError, match=problem):
        RegisteredNamesDns(write(tmp_path, f"# names\nok.com\n{domain}\n", "registered.txt"))
    header = "domain,status,registered_at,expires_at\nok.com,registered,,\n"
    with pytest.raises(ProviderDataError, match=problem):
        RecordsRdap(write(tmp_path, f"{header}{domain},registered,,\n"))
    header = "domain,price,currency,sale_date\nok.com,1,USD,2021-01-01\n"
    with pytest.raises(ProviderDataError, match=problem):
        load_comparable_sales(write(tmp_path, f"{header}{domain},1,USD,2021-01-01\n"))


@pytest.mark.parametrize("domain", ["xn--ls8h.com", "xn--a.com", "💩.com"])
def test_an_invalid_name_is_never_looked_up_nor_available(domain: str) -> None:
    providers = offline_providers()
    verdict = providers.dns.check(domain)
    record = providers.rdap.lookup(domain)
    assert (verdict.availability, record.availability) == (Availability.UNKNOWN,) * 2
    assert verdict.detail.startswith("not a valid domain name:"), verdict.detail
    assert record.detail.startswith("not a valid domain name:"), record.detail


def test_offline_providers_on_sample_data() -> None:
    providers = offline_providers()
    assert providers.is_sample
    assert "SAMPLE DATA" in providers.label
    assert providers.dns.check("google.com").availability is Availability.REGISTERED
    # RDAP catches a name DNS missed (registered but not delegated, in the sample story).
    assert providers.dns.check("hikingboots.com").availability is Availability.AVAILABLE
    assert providers.rdap.lookup("hikingboots.com").availability is Availability.REGISTERED
    assert providers.rdap.lookup("zentrova.com").availability is Availability.AVAILABLE
    marks = providers.trademarks.marks()
    assert marks is not None and {"apple", "nike", "7-eleven"} <= {m.mark for m in marks}
    assert len(providers.keyword_data) >= 40
    assert len(providers.comparable_sales) >= 40
    assert all(s.currency == "USD" for s in providers.comparable_sales)


def test_sample_files_are_labelled() -> None:
    for name in ("registered.txt", "rdap_records.csv", "marks.csv", "keywords.csv", "comps.csv"):
        first = (SAMPLE_DATA_DIR / name).read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# SAMPLE DATA"), name
    assert "SAMPLE DATA" in (SAMPLE_DATA_DIR / "README.md").read_text(encoding="utf-8")
    sample = json.loads(SAMPLE_INPUT_PATH.read_text(encoding="utf-8"))
    assert len(sample["keywords"]) == 15
    assert len(sample["brandable"]) == 10
    assert len(sample["closeout"]) == 9


def test_copied_sample_data_is_still_labelled_sample(tmp_path: Path) -> None:
    for source in SAMPLE_DATA_DIR.iterdir():
        (tmp_path / source.name).write_bytes(source.read_bytes())
    assert offline_providers(tmp_path).is_sample


def test_bundled_bootstrap_covers_common_tlds() -> None:
    bootstrap = RdapBootstrap.load()
    for tld in ("com", "net", "org", "io", "ai", "co", "app", "dev", "xyz"):
        (url,) = bootstrap.base_urls(f"example.{tld}")
        assert url.startswith("https://") and url.endswith("/")
    nested = RdapBootstrap.parse(
        {"services": [[["uk"], ["https://uk.example/"]], [["co.uk"], ["https://co.example"]]]}
    )
    assert nested.base_urls("shop.co.uk") == ["https://co.example/"]
    assert nested.base_urls("shop.org.uk") == ["https://uk.example/"]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"mark\nab\x00c\n", "line 2: contains a NUL character"),
        (b'mark,owner\n"Apple,Apple Inc.\n', "line 2: a quote is not closed"),
        (b'mark\n"Apple\nInc."\n', "line 2: a quote is not closed"),  # no multi-line records
        (b'mark\n"Apple"Inc\n', "line 2: text after the closing quote"),
        (b"mark\nApple\rNike\n", "line 2: a carriage return inside a line"),
        (b'mark\n"' + b"x" * 131_073 + b'"\n', "line 2: a field is longer than 131,072"),
        (b"mark\nApple\n# caf\xe9\nNik\xe9\n", "line 3: not UTF-8 text"),
        (b"mark\n" + b"x" * (1_048_576 + 1), "line 2: line longer than 1,048,576 bytes"),
    ],
    ids=[
        "nul",
        "open-quote",
        "quoted-newline",
        "after-quote",
        "cr",
        "long-field",
        "latin-1",
        "long",
    ],
)
def test_the_shared_reader_refuses_malformed_csv_naming_the_line(
    tmp_path: Path, content: bytes, problem: str
) -> None:
    path = tmp_path / "marks.csv"
    path.write_bytes(content)
    with pytest.raises(ProviderDataError) as caught:
        load_marks(path)
    assert caught.value.message.startswith(f"{path}, {problem}")


def test_quoted_fields_and_crlf_line_ends_still_read(tmp_path: Path) -> None:
    path = write(tmp_path, 'mark,owner\r\n"Nike","Nike, Inc."\r\n"say ""hi""",x\r\n', bom=True)
    assert [(mark.mark, mark.owner) for mark in load_marks(path)] == [
        ("Nike", "Nike, Inc."),
        ('say "hi"', "x"),
    ]


def test_a_closeout_csv_longer_than_a_run_takes_stops_at_the_first_row_too_many(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, "domain\n" + "".join(f"d{index}.com\n" for index in range(10)))
    assert len(read_closeout_csv(path, max_rows=10)) == 10
    with pytest.raises(ProviderDataError, match="line 5: more than 3 domains, the most a run"):
        read_closeout_csv(path, max_rows=3)
