"""Top-level domains as the value model groups them.

The group is a coarse market (how deep, how liquid, how dear): the model learns a term per TLD
from sales too, and the group is what a TLD seen too rarely falls back on. The evaluation reports
its figures per group as well.
"""

from __future__ import annotations

from enum import StrEnum


class TldGroup(StrEnum):
    COM = "com"
    NET_ORG = "net-org"
    LEGACY = "legacy"  # the other generic TLDs from before 2013
    TECH = "tech-cctld"  # country codes that trade as generic tech names (.io, .ai, .co…)
    CCTLD = "cctld"  # other country codes, including second-level ones such as .co.uk
    NEW_GTLD = "new-gtld"


LEGACY_TLDS = frozenset(
    {"info", "biz", "mobi", "name", "pro", "asia", "tel", "travel", "jobs", "cat", "aero", "xxx"}
)
TECH_CCTLDS = frozenset(
    {"io", "ai", "co", "me", "tv", "cc", "gg", "ly", "to", "sh", "so", "vc", "fm", "ws", "xyz"}
)
# .xyz is a new gTLD by date, but trades like the tech country codes (short names, crypto
# buyers); grouping it there keeps the group's market closer to its sales.


def split_domain(domain: str) -> tuple[str, str]:
    """`"cloudnest.com"` → `("cloudnest", "com")`; `"shop.co.uk"` → `("shop", "co.uk")`.

    Lower-cased and without a trailing root dot; the label is everything before the first dot.
    A name without a dot is all label, with an empty TLD."""
    name = domain.strip().lower().rstrip(".")
    if name.startswith("www."):
        name = name[4:]
    label, _, tld = name.partition(".")
    return label, tld


def tld_group(tld: str) -> TldGroup:
    tld = tld.lower()
    if tld == "com":
        return TldGroup.COM
    if tld in {"net", "org"}:
        return TldGroup.NET_ORG
    if tld in LEGACY_TLDS:
        return TldGroup.LEGACY
    if tld in TECH_CCTLDS:
        return TldGroup.TECH
    last = tld.rsplit(".", 1)[-1]
    if len(last) == 2:
        return TldGroup.CCTLD
    return TldGroup.NEW_GTLD
