"""Splitting a candidate name into its second-level label and its public suffix."""

from __future__ import annotations


def split_domain(domain: str) -> tuple[str, str]:
    """`"cloudnest.com"` → `("cloudnest", "com")`; `"shop.co.uk"` → `("shop", "co.uk")`.

    Candidates are always `label.suffix`, so the label is everything before the first dot and the
    suffix everything after it (lower-cased; a trailing root dot is dropped). A name without a
    dot is all label, with an empty suffix."""
    name = domain.strip().lower().rstrip(".")
    label, _, suffix = name.partition(".")
    return label, suffix
