"""Small trademark office files in the offices' real structure, with invented marks: a USPTO
daily applications XML file and an EUIPO TM-XML (ST.66) download."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CaseFile:
    serial: str
    words: str
    drawing: str = "4000"  # standard characters
    classes: tuple[str, ...] = ("009",)
    owners: tuple[str, ...] = ("Quorbit Labs LLC",)
    abandoned: str = ""
    cancelled: str = ""


def uspto_daily(*cases: CaseFile) -> str:
    body = "".join(_case_file(case) for case in cases)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<!DOCTYPE trademark-applications-daily SYSTEM "trademark-applications-daily-v2.dtd">\n'
        "<trademark-applications-daily>\n"
        "<version><version-no>2.0</version-no><version-date>20120726</version-date></version>\n"
        "<creation-datetime>202603010330</creation-datetime>\n"
        "<application-information><file-segments><file-segment>TRMK</file-segment>\n"
        f"<action-keys><action-key>00</action-key>\n{body}</action-keys>\n"
        "</file-segments></application-information>\n"
        "</trademark-applications-daily>\n"
    )


def _case_file(case: CaseFile) -> str:
    dates = "".join(
        f"<{name}>{value}</{name}>"
        for name, value in (
            ("abandonment-date", case.abandoned),
            ("cancellation-date", case.cancelled),
        )
        if value
    )
    classes = "".join(
        "<classification><international-code-total-no>1</international-code-total-no>"
        f"<international-code>{code}</international-code><status-code>6</status-code>"
        "</classification>"
        for code in case.classes
    )
    owners = "".join(
        f"<case-file-owner><entry-number>{n}</entry-number><party-type>{10 * n}</party-type>"
        f"<party-name>{name}</party-name><country>US</country></case-file-owner>"
        for n, name in enumerate(case.owners, start=1)
    )
    return (
        f"<case-file><serial-number>{case.serial}</serial-number>"
        "<transaction-date>20260228</transaction-date>"
        "<case-file-header><filing-date>20250105</filing-date><status-code>630</status-code>"
        f"<status-date>20260227</status-date><mark-identification>{case.words}"
        f"</mark-identification><mark-drawing-code>{case.drawing}</mark-drawing-code>{dates}"
        "</case-file-header>"
        f"<classifications>{classes}</classifications>"
        f"<case-file-owners>{owners}</case-file-owners></case-file>\n"
    )


@dataclass(frozen=True)
class EuMark:
    number: str
    words: str = ""
    status: str = "Registered"
    feature: str = "Word"
    classes: tuple[str, ...] = ("9", "42")
    operation: str = "Insert"


def euipo_download(*marks: EuMark) -> str:
    body = "".join(_trade_mark(mark) for mark in marks)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<Transaction xmlns="http://www.euipo.europa.eu/EUTM/EUTM_Download">\n'
        "<TransactionHeader><SenderDetails><RequestProducerDateTime>2026-03-01T02:00:00"
        "</RequestProducerDateTime></SenderDetails></TransactionHeader>\n"
        "<TradeMarkTransactionBody><TransactionContentDetails>"
        "<TransactionIdentifier>1</TransactionIdentifier>"
        "<TransactionCode>EM-Trade Mark</TransactionCode><TransactionData>"
        f"<TradeMarkDetails>\n{body}</TradeMarkDetails>"
        "</TransactionData></TransactionContentDetails></TradeMarkTransactionBody>\n"
        "</Transaction>\n"
    )


def _trade_mark(mark: EuMark) -> str:
    words = (
        "<WordMarkSpecification><MarkVerbalElementText>"
        f"{mark.words}</MarkVerbalElementText></WordMarkSpecification>"
        if mark.words
        else ""
    )
    classes = "".join(
        f"<ClassDescription><ClassNumber>{code}</ClassNumber></ClassDescription>"
        for code in mark.classes
    )
    return (
        f'<TradeMark operationCode="{mark.operation}"><RegistrationOfficeCode>EM'
        f"</RegistrationOfficeCode><ApplicationNumber>{mark.number}</ApplicationNumber>"
        "<ApplicationDate>2024-02-01</ApplicationDate>"
        f"<MarkCurrentStatusCode>{mark.status}</MarkCurrentStatusCode>"
        f"<MarkFeature>{mark.feature}</MarkFeature>{words}"
        "<GoodsServicesDetails><GoodsServices><ClassDescriptionDetails>"
        f"{classes}</ClassDescriptionDetails></GoodsServices></GoodsServicesDetails>"
        "<ApplicantDetails><ApplicantKey><Identifier>900123</Identifier></ApplicantKey>"
        "</ApplicantDetails></TradeMark>\n"
    )
