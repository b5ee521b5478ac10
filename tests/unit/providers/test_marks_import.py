"""`import_marks`: the USPTO's and EUIPO's bulk files, in their real structure (small, invented
marks), merged into the marks file the trademark gate reads."""

from __future__ import annotations

import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path
from xml.etree import ElementTree

import pytest

from dominus.providers.errors import ProviderDataError
from dominus.providers.marks_import import import_marks
from dominus.providers.models import Mark
from dominus.providers.trademark_bulk import DEAD, DELETED, NO_TEXT, NOT_WORDS, read_bulk
from dominus.providers.trademarks import load_marks
from tests.support.trademark_files import CaseFile, EuMark, euipo_download, uspto_daily


def test_a_uspto_daily_file_keeps_live_word_marks(tmp_path: Path) -> None:
    source = tmp_path / "apc260301.xml"
    source.write_text(
        uspto_daily(
            CaseFile("97000001", "QUORBIT", classes=("009", "042"), owners=("A Co", "B Co")),
            CaseFile("97000002", "GLIMMERKETTLE", abandoned="20251201"),
            CaseFile("97000003", "ZENTRIX", cancelled="20240101"),
            CaseFile("97000004", "", drawing="2000"),
            CaseFile("97000005", "VELMORA SHOES", drawing="3000"),  # design with words: kept
            CaseFile("97000006", ""),
        )
    )
    target = tmp_path / "marks.csv"
    report = import_marks(source, target)
    assert (report.read, report.imported, report.total) == (6, 2, 2)
    assert report.skipped == {DEAD: 2, NOT_WORDS: 1, NO_TEXT: 1}
    assert load_marks(target) == [
        Mark("QUORBIT", "B Co", "USPTO", ("9", "42"), "97000001"),  # the last owner listed
        Mark("VELMORA SHOES", "Quorbit Labs LLC", "USPTO", ("9",), "97000005"),
    ]


def test_an_euipo_download_keeps_live_word_marks(tmp_path: Path) -> None:
    source = tmp_path / "EUTM_DIFF.xml"
    source.write_text(
        euipo_download(
            EuMark("018000001", "Quorbit", classes=("09", "42")),
            EuMark("018000002", "Glimmer", status="Application refused"),
            EuMark("018000003", "Zentrix", status="Registration cancellation pending"),
            EuMark("018000004", feature="Figurative"),
            EuMark("018000005", "Velmora", operation="Delete"),
        )
    )
    target = tmp_path / "marks.csv"
    report = import_marks(source, target)
    assert (report.read, report.imported) == (5, 2)
    assert report.skipped == {DEAD: 1, NOT_WORDS: 1, DELETED: 1}
    assert [(m.mark, m.registry, m.classes, m.number) for m in load_marks(target)] == [
        ("Quorbit", "EUIPO", ("9", "42"), "018000001"),
        ("Zentrix", "EUIPO", ("9", "42"), "018000003"),  # pending is not dead
    ]


def test_a_later_file_replaces_and_removes_by_number_and_keeps_hand_rows(tmp_path: Path) -> None:
    target = tmp_path / "marks.csv"
    target.write_text(
        "mark,owner,registry,classes\nmybrand,Me,,35\n"  # the operator's own row, no number
    )
    first = tmp_path / "day1.xml"
    first.write_text(uspto_daily(CaseFile("97000001", "QUORBIT"), CaseFile("97000002", "ZENTRIX")))
    import_marks(first, target)
    second = tmp_path / "day2.zip"  # as downloaded: the XML in a zip
    with zipfile.ZipFile(second, "w") as archive:
        archive.writestr(
            "apc260302.xml",
            uspto_daily(
                CaseFile("97000001", "QUORBIT LABS"),
                CaseFile("97000002", "ZENTRIX", abandoned="20260301"),
                CaseFile("97000009", "VELMORA"),
            ),
        )
    report = import_marks(second, target)
    assert (report.replaced, report.removed, report.total) == (1, 1, 3)
    assert [(m.mark, m.number) for m in load_marks(target)] == [
        ("mybrand", ""),
        ("QUORBIT LABS", "97000001"),
        ("VELMORA", "97000009"),
    ]


def test_records_are_read_as_a_stream_not_kept(tmp_path: Path) -> None:
    """The real files are gigabytes: reading them must hold one record at a time. Measured
    against parsing the same file whole, which holds them all."""
    source = tmp_path / "big.xml"
    source.write_text(uspto_daily(*(CaseFile(f"97{n:06d}", f"MARK{n}") for n in range(4000))))

    def peak(read: Callable[[], object]) -> int:
        tracemalloc.start()
        try:
            read()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    streamed = peak(lambda: sum(1 for _ in read_bulk(source)))
    whole = peak(lambda: ElementTree.parse(source))
    assert streamed * 5 < whole, (streamed, whole)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("<trademark-applications-daily><case-file>", "not well-formed XML"),
        ("<html><body/></html>", "not a USPTO nor an EUIPO trademark file (root <html>)"),
        ("", "not well-formed XML"),
    ],
)
def test_bad_input_leaves_the_marks_file_untouched(tmp_path: Path, text: str, problem: str) -> None:
    target = tmp_path / "marks.csv"
    target.write_text("mark,owner,registry,classes,number\nquorbit,,USPTO,9,97000001\n")
    before = target.read_bytes()
    source = tmp_path / "bad.xml"
    source.write_text(text)
    with pytest.raises(ProviderDataError) as caught:
        import_marks(source, target)
    assert problem in caught.value.message
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.xml", "marks.csv"]  # no leftovers
