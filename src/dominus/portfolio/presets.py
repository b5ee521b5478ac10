"""Header matching and presets for registrars' and marketplaces' CSV exports.

Facts from /work/shared/registrar-exports.md (column names and quirks of each export). A header
is normalised before it is matched: lower-cased, `*`, "required" and bracketed hints dropped,
spaces and punctuation stripped (`*Name (Required)` → `name`). Columns that hold personal data
(contacts), auth codes or figures the owner did not set (GoDaddy's `Estimated Value`) match no
field, so they are never read."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# The fields an import fills (EntryFields' names, plus the file's currency, checked per row).
FIELDS = (
    "domain",
    "renewal_date",
    "acquired_at",
    "acquisition_cost",
    "renewal_cost",
    "registrar",
    "list_price",
    "renewals_paid",
    "notes",
    "auto_renew",
    "registrar_status",
    "currency",
)
DATE_FIELDS = ("renewal_date", "acquired_at")
AMOUNT_FIELDS = ("acquisition_cost", "renewal_cost", "list_price", "renewals_paid")


def normalise_header(header: str) -> str:
    text = header.lower().replace("*", "")
    text = re.sub(r"\([^)]*\)|\[[^\]]*\]", "", text)
    text = text.replace("required", "")
    return re.sub(r"[^0-9a-z]", "", text)


def _keys(*headers: str) -> frozenset[str]:
    return frozenset(normalise_header(header) for header in headers)


# A bare "price" or "amount" is ambiguous (asked for, or paid?): only a preset or --map maps it.
ALIASES: dict[str, frozenset[str]] = {
    "domain": _keys("domain", "domain name", "name", "domain_name", "domain name (ACE)"),
    "renewal_date": _keys(
        "expiration date",
        "expiry",
        "expiry date",
        "expires on",
        "expires",
        "date_expiration",
        "paid until",
    ),
    "acquired_at": _keys(
        "purchased",
        "purchased on",
        "date purchased",
        "acquired",
        "acquired at",
        "acquisition date",
        "paid date",
    ),
    "acquisition_cost": _keys(
        "purchase price",
        "purchase cost",
        "cost",
        "paid",
        "amount paid",
        "acquisition cost",
    ),
    "renewal_cost": _keys(
        "renewal",
        "renewal fee",
        "renewal cost",
        "renew price",
        "annual renewal price",
        "renewal price",
    ),
    "registrar": _keys("registrar", "registrar name", "sponsoring registrar"),
    "list_price": _keys(
        "asking price",
        "buy now price",
        "buy now",
        "BIN",
        "BIN price",
        "list price",
        "buy_now_price",
    ),
    "renewals_paid": _keys("renewals paid"),
    "notes": _keys("note", "notes", "comments", "comment", "memo"),
    "auto_renew": _keys(
        "auto renew", "autorenew", "auto_renew_enabled", "auto renewal", "renewal status"
    ),
    # Only a column that says it is the registrar's: a bare `Status` may be a registry (EPP)
    # status (Hexonet's `ACTIVE clientTransferProhibited`) or a marketplace's (Efty's `sold`).
    "registrar_status": _keys("registrar status"),
    "currency": _keys("currency", "curr", "ccy"),
}
# `Renewal Date` is the renewal date only when the file has no expiry column.
RENEWAL_DATE_FALLBACK = _keys("renewal date")


@dataclass(frozen=True)
class Preset:
    name: str
    label: str
    # field → the export's column, beyond (and before) the aliases.
    columns: dict[str, str] = field(default_factory=dict)
    delimiter: str | None = None  # None: sniffed (comma or semicolon)
    date_format: str | None = None
    zero_is_blank: bool = False  # `0` / `0.00` means "not set"
    registrar: str | None = None  # the registrar every row is held at (a registrar's export)
    # (column, values): rows whose column holds one of these are skipped, with the reason.
    skip_when: tuple[str, frozenset[str], str] | None = None


PRESETS: dict[str, Preset] = {
    preset.name: preset
    for preset in (
        Preset(
            "godaddy",
            "GoDaddy",
            {
                "domain": "Domain Name",
                "renewal_date": "Expiration Date",
                "renewal_cost": "Renewal Price",
                "auto_renew": "Auto Renew",
                "registrar_status": "Status",  # GoDaddy's own: Active, Expired, ...
            },
            registrar="GoDaddy",
        ),
        Preset(
            "dynadot",
            "Dynadot",
            {
                "domain": "Domain",
                "renewal_date": "Expiration Date",
                "notes": "Note",
                "auto_renew": "Auto Renew",
            },
            registrar="Dynadot",
        ),
        Preset(
            "namecheap",
            "Namecheap",
            {
                "domain": "Domain Name",
                "renewal_date": "Expiration Date",
                "auto_renew": "Auto-Renew",
            },
            registrar="Namecheap",
        ),
        Preset(
            "networksolutions",
            "Network Solutions",
            {
                "domain": "Domain Name",
                "renewal_date": "Expiration Date",
                "auto_renew": "Auto Renew",
            },
            date_format="%m/%d/%Y",
            registrar="Network Solutions",
        ),
        Preset(
            "sav",
            "Sav",
            {
                "domain": "domain_name",
                "renewal_date": "expiration_date",
                "acquired_at": "purchase_date",
                "acquisition_cost": "purchase_price",
                "list_price": "buy_now_price",
                "auto_renew": "auto_renew",
            },
            registrar="Sav",
        ),
        Preset(
            "parkio",
            "park.io",
            {
                "domain": "Domain",
                "acquired_at": "Paid Date",
                "acquisition_cost": "Amount (USD)",
                "renewal_date": "Expires",
            },
        ),
        Preset(
            "efty",
            "Efty",
            {
                "domain": "Domain",
                "acquisition_cost": "Purchase Price",
                "acquired_at": "Purchase Date",
                "renewal_cost": "Renewal Price",
                "list_price": "BIN Price",
            },
            date_format="%m-%d-%Y",
            zero_is_blank=True,
            skip_when=("Status", frozenset({"sold"}), "marked sold in the file"),
        ),
        Preset(
            "afternic",
            "Afternic",
            {"domain": "Domain Name", "list_price": "Buy Now Price"},
            zero_is_blank=True,
        ),
        Preset(
            "sedo",
            "Sedo",
            {"domain": "Domain", "list_price": "Price", "currency": "Currency"},
            delimiter=";",
        ),
    )
}


def preset_names() -> str:
    return ", ".join(sorted(PRESETS))
