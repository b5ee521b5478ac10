"""Watched domains and their polling: DNS then RDAP for each entry that is due, one
notification when a name becomes available, re-armed when it is seen registered again
(ADR 0022)."""
