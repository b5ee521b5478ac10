"""The trademark gate: each rule positive and negative, normalisation, and a full-size run."""

from __future__ import annotations

import random
import string

import pytest

from dominus.pipeline.trademark_gate import (
    GateResult,
    TrademarkGate,
    TrademarkVerdict,
    name_tokens,
    normalise_mark,
    within_one_edit,
)
from dominus.providers.models import Mark

BLOCKED = TrademarkVerdict.BLOCKED
CLEAR = TrademarkVerdict.CLEAR


def gate(*marks: str) -> TrademarkGate:
    return TrademarkGate([Mark(mark=m) for m in marks])


@pytest.mark.parametrize(
    ("marks", "domain", "expected"),
    [
        # exact
        (["Apple"], "apple.com", GateResult(BLOCKED, "Apple", "exact")),
        (["Apple"], "apple-pie.com", GateResult(BLOCKED, "Apple", "exact")),  # hyphen token
        (["Apple"], "a-pple.com", GateResult(BLOCKED, "Apple", "exact")),  # whole label
        (["Apple"], "APPLE.io", GateResult(BLOCKED, "Apple", "exact")),
        # substring (mark ≥ 3 inside a token)
        (["Apple"], "myapplestore.com", GateResult(BLOCKED, "Apple", "substring")),
        (["Apple"], "apples.com", GateResult(BLOCKED, "Apple", "substring")),
        (["Apple"], "pineapple.com", GateResult(BLOCKED, "Apple", "substring")),
        (["IBM"], "ibmcloud.com", GateResult(BLOCKED, "IBM", "substring")),
        (["IBM"], "ibm.com", GateResult(BLOCKED, "IBM", "exact")),
        # edit distance ≤ 1 (both ≥ 4)
        (["Apple"], "appla.com", GateResult(BLOCKED, "Apple", "edit_distance")),  # substitution
        (["Apple"], "appl.com", GateResult(BLOCKED, "Apple", "edit_distance")),  # deletion
        (["Apple"], "applle.com", GateResult(BLOCKED, "Apple", "edit_distance")),  # insertion
        (["Sony"], "sany.com", GateResult(BLOCKED, "Sony", "edit_distance")),
        (["Sony"], "sonny.net", GateResult(BLOCKED, "Sony", "edit_distance")),
        (["Apple"], "best-appla.com", GateResult(BLOCKED, "Apple", "edit_distance")),
        # negatives
        (["Apple"], "app.com", GateResult(CLEAR)),  # "apple" is not inside "app"; token < 4
        (["Apple"], "paple.com", GateResult(CLEAR)),  # a transposition is distance 2
        (["Apple"], "aplpe.com", GateResult(CLEAR)),
        (["Apple"], "myappla.com", GateResult(CLEAR)),  # edit distance is token-to-mark only
        (["Apple"], "orange.com", GateResult(CLEAR)),
        (["IBM"], "ibx.com", GateResult(CLEAR)),  # edit distance needs marks of ≥ 4
        (["Kia"], "kiwa.com", GateResult(CLEAR)),  # distance 1, but the mark has 3 letters
        (["Sony"], "soy.com", GateResult(CLEAR)),  # distance 1, but the token has 3 letters
        (["Sony"], "son.com", GateResult(CLEAR)),
        (["Coca-Cola"], "coca.com", GateResult(CLEAR)),  # the mark is longer than the token
        # short marks (< 3) match exactly only
        (["GE"], "ge.com", GateResult(BLOCKED, "GE", "exact")),
        (["GE"], "ge-tools.com", GateResult(BLOCKED, "GE", "exact")),
        (["GE"], "gear.com", GateResult(CLEAR)),
        (["GE"], "get.com", GateResult(CLEAR)),
        (["GE"], "g.com", GateResult(CLEAR)),
        # punctuation and spaces in marks
        (["Coca-Cola"], "coca-cola.com", GateResult(BLOCKED, "Coca-Cola", "exact")),
        (["Coca-Cola"], "cocacolafans.com", GateResult(BLOCKED, "Coca-Cola", "substring")),
        (["Best Buy"], "bestbuy.com", GateResult(BLOCKED, "Best Buy", "exact")),
        (["Nestlé"], "nestle.com", GateResult(BLOCKED, "Nestlé", "exact")),
        # digits spelled as words, in marks and in names
        (["7-Eleven"], "seveneleven.com", GateResult(BLOCKED, "7-Eleven", "exact")),
        (["7-Eleven"], "7eleven.com", GateResult(BLOCKED, "7-Eleven", "exact")),
        (["7-Eleven"], "7-eleven.com", GateResult(BLOCKED, "7-Eleven", "exact")),
        (["7-Eleven"], "7elevn.com", GateResult(BLOCKED, "7-Eleven", "edit_distance")),
        (["3M"], "3m.com", GateResult(BLOCKED, "3M", "exact")),
        (["3M"], "threem.com", GateResult(BLOCKED, "3M", "exact")),
        (["3M"], "3m-tools.com", GateResult(BLOCKED, "3M", "exact")),
        (["FaceFourBook"], "face4book.com", GateResult(BLOCKED, "FaceFourBook", "exact")),
        (["face4book"], "facefourbook.com", GateResult(BLOCKED, "face4book", "exact")),
        # "face4book" is "facefourbook": 4 edits from "facebook" and does not contain it
        (["Facebook"], "face4book.com", GateResult(CLEAR)),
        # rule order and ties: exact beats substring; the longest substring wins
        (["Apple", "Apples"], "apples.com", GateResult(BLOCKED, "Apples", "exact")),
        (["Apple", "Pineapple"], "pineapple.com", GateResult(BLOCKED, "Pineapple", "exact")),
        (["App", "Apple"], "myapplestore.com", GateResult(BLOCKED, "Apple", "substring")),
        (["Apple", "Sony"], "appla-sony.com", GateResult(BLOCKED, "Sony", "exact")),
        # the first spelling of a mark is the one reported
        (["APPLE", "Apple Inc"], "apple.com", GateResult(BLOCKED, "APPLE", "exact")),
        (["Apple", "apple"], "apple.com", GateResult(BLOCKED, "Apple", "exact")),
    ],
)
def test_gate_rules(marks: list[str], domain: str, expected: GateResult) -> None:
    assert gate(*marks).check(domain) == expected


def test_no_source_is_unverified_and_an_empty_source_is_clear() -> None:
    unknown = TrademarkGate(None)
    assert not unknown.available
    assert unknown.check("apple.com") == GateResult(TrademarkVerdict.UNVERIFIED)
    empty = TrademarkGate([])
    assert empty.available
    assert empty.check("apple.com") == GateResult(CLEAR)


def test_marks_that_normalise_to_nothing_are_ignored() -> None:
    marks = gate("!!!", "   ", "Apple")
    assert len(marks) == 1
    assert marks.check("zzz.com").verdict is CLEAR


def test_verdict_values() -> None:
    assert [v.value for v in TrademarkVerdict] == ["clear", "blocked", "unverified"]


@pytest.mark.parametrize(
    ("mark", "expected"),
    [
        ("Coca-Cola", "cocacola"),
        ("7-Eleven", "seveneleven"),
        ("3M", "threem"),
        ("Nestlé", "nestle"),
        ("AT&T", "att"),
        ("Road 66", "roadsixsix"),
        ("0", "zero"),
        ("!!!", ""),
    ],
)
def test_normalise_mark(mark: str, expected: str) -> None:
    assert normalise_mark(mark) == expected


@pytest.mark.parametrize(
    ("domain", "tokens"),
    [
        ("cloudnest.com", ["cloudnest"]),
        ("best-coca-cola.com", ["best", "coca", "cola", "bestcocacola"]),
        ("7eleven.com", ["seveneleven"]),
        ("a--b.co.uk", ["a", "b", "ab"]),
        ("shop-shop.com", ["shop", "shopshop"]),
    ],
)
def test_name_tokens(domain: str, tokens: list[str]) -> None:
    assert name_tokens(domain) == tokens


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("apple", "apple", True),
        ("apple", "appla", True),
        ("apple", "appl", True),
        ("apple", "xapple", True),
        ("apple", "paple", False),
        ("apple", "ap", False),
        ("abcd", "abdc", False),
        ("", "a", True),
    ],
)
def test_within_one_edit(a: str, b: str, expected: bool) -> None:
    assert within_one_edit(a, b) is expected
    assert within_one_edit(b, a) is expected


def test_ten_thousand_names_against_two_thousand_marks() -> None:
    rng = random.Random(20250615)
    letters = string.ascii_lowercase

    def word(low: int, high: int) -> str:
        return "".join(rng.choice(letters) for _ in range(rng.randint(low, high)))

    marks = [word(2, 12) for _ in range(2000)]
    names = [
        f"{word(3, 10)}-{word(3, 8)}.com" if i % 5 == 0 else f"{word(4, 15)}.com"
        for i in range(10_000)
    ]
    names[:3] = [f"{marks[0]}.com", f"my{marks[1]}x.net", "zz-" + marks[2] + ".io"]
    tm = TrademarkGate([Mark(mark=m) for m in marks])
    results = [tm.check(name) for name in names]
    assert len(results) == 10_000
    assert all(r.verdict in (BLOCKED, CLEAR) for r in results)
    assert results[0] == GateResult(BLOCKED, marks[0], "exact")
    assert results[1].verdict is BLOCKED
    assert results[2].verdict is BLOCKED
    # random letters collide with 2- and 3-letter marks often, but not always
    assert 0 < sum(r.verdict is BLOCKED for r in results) < 10_000
