"""Reading a WHOIS answer: free, registered, rate-limited or refused (RFC 3912 fixes no format).

WHOIS text is free-form and differs per registry, so this is a heuristic and it errs one way:
a name is AVAILABLE only when the answer matches a known "no match" pattern below. A rate-limit
answer is retried like an HTTP 429; a refusal (access denied, blacklisted) is UNKNOWN; any other
answer means the registry has a record for the name, i.e. REGISTERED. Patterns are matched
case-insensitively against one line at a time, so boilerplate elsewhere in the answer cannot
join words across lines.

The order of the checks matters: rate limits and refusals first (a blocked client must never
read as "not found"), looked for in the first lines only (see `_head`); then "no match"
anywhere; then registered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum


class AnswerKind(StrEnum):
    AVAILABLE = "available"
    REGISTERED = "registered"
    RATE_LIMITED = "rate_limited"  # retry with backoff, then UNKNOWN
    REFUSED = "refused"  # the server will not answer us: UNKNOWN, no retry
    EMPTY = "empty"  # nothing but blank or comment lines: retried, then UNKNOWN


def _lines(*patterns: str) -> tuple[re.Pattern[str], ...]:
    # A line may start with comment markers registries put before every line (%, #, >, [).
    return tuple(
        re.compile(rf"^[\s%#>\[]*(?:{pattern})", re.IGNORECASE | re.MULTILINE)
        for pattern in patterns
    )


# --- the table -------------------------------------------------------------------------------
# "No match" answers, each seen in a registry's documentation or answers (examples in comments).
NO_MATCH = _lines(
    r"no match\b",  # Verisign, Nominet: 'No match for "X".'; JPRS: 'No match!!'
    r"(?:%+\s*)?no entries found\b",  # AFNIC, others: '%% No entries found'
    r"(?:domain\s+)?not found\b",  # PIR, Identity Digital: 'NOT FOUND', 'Domain not found.'
    r"no data found\b",  # auDA and others
    r"nothing found\b",  # nic.at: '% nothing found'
    r"no object found\b",
    r"object does not exist\b",
    r"the queried object does not exist\b",  # ICANN RDDS wording (CentralNic and others)
    r"domain\s+\S+\s+not found\b",  # '.se'-style: 'domain "x.se" not found'
    r"status:\s*(?:free|available)\s*\.?\s*$",  # DENIC 'Status: free'; EURid, .it, .be
)

# Per WHOIS server: wordings only that registry uses, too loose to apply everywhere.
SERVER_NO_MATCH: dict[str, tuple[re.Pattern[str], ...]] = {
    "whois.domain-registry.nl": _lines(r"\S+\s+is free\b"),  # SIDN: 'x.nl is free'
    "whois.dns.pl": _lines(r"no information available about domain name\b"),  # NASK
}

# Rate limits and quotas. Deliberately no bare "rate limit(ed)": some registries print "access
# is rate limited" in the boilerplate of every answer.
RATE_LIMITED = _lines(
    # Nominet: 'The WHOIS query quota for <address> has been exceeded'
    r".*\b(?:limit|quota)\b.*\bexceeded\b",
    r".*\bexceeded\b.*\b(?:limit|quota|queries|rate)\b",  # 'You have exceeded the query limit'
    r".*\btoo many (?:queries|requests|connections)\b",
    r".*\bexcessive querying\b",
    r".*\btry again (?:later|in\b)",
    r".*\bquery rate\b",
)

# The server refuses to answer this client at all; asking again will not change that.
REFUSED = _lines(
    r".*\baccess denied\b",
    r".*\bnot authori[sz]ed\b",
    r".*\bblacklisted\b",
    r".*\byour (?:ip|address|connection) (?:has been |is )?(?:blocked|banned|refused)\b",
)

# Date fields a registered answer may carry, by what they mean.
REGISTERED_KEYS = (
    "creation date",
    "created",
    "created on",
    "registered on",
    "registered",
    "registration date",
    "registration time",
    "domain registration date",
)
EXPIRES_KEYS = (
    "registry expiry date",
    "registrar registration expiration date",
    "expiry date",
    "expiration date",
    "expire date",
    "expires",
    "expires on",
    "renewal date",
    "paid-till",
)
# `key: value` on one line (never across lines: "Relevant dates:" heads a block of fields).
_FIELD = re.compile(r"^[ \t%#>\[]*([A-Za-z][A-Za-z -]*?)[ \t]*[:\]][ \t]*(\S.*?)\s*$", re.MULTILINE)
HEAD_LINES = 3
_MONTHS = {
    name: index
    for index, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1
    )
}


@dataclass(frozen=True)
class AnswerVerdict:
    kind: AnswerKind
    matched: str = ""  # the line that decided it, for the record's detail
    registered_at: date | None = None
    expires_at: date | None = None


def classify(answer: str, server: str = "") -> AnswerVerdict:
    """What `answer` (the text `server` sent for one domain query) says about the domain."""
    head = "\n".join(_head(answer))
    for kind, patterns in ((AnswerKind.RATE_LIMITED, RATE_LIMITED), (AnswerKind.REFUSED, REFUSED)):
        line = _first_match(patterns, head)
        if line:
            return AnswerVerdict(kind, line)
    line = _first_match(NO_MATCH + SERVER_NO_MATCH.get(server.lower(), ()), answer)
    if line:
        return AnswerVerdict(AnswerKind.AVAILABLE, line)
    if not any(_is_content(line) for line in answer.splitlines()):
        # Nothing but blank or comment lines: a server that hung up, not an answer about the name.
        return AnswerVerdict(AnswerKind.EMPTY)
    registered_at, expires_at = answer_dates(answer)
    return AnswerVerdict(AnswerKind.REGISTERED, "", registered_at, expires_at)


def _head(answer: str) -> list[str]:
    """The first HEAD_LINES non-blank lines. Rate-limit and refusal notices are the whole (short)
    answer, while terms of use that mention limits or blacklisting come at the end of real
    answers: looking at the head only keeps that boilerplate from reading as a refusal."""
    return [line for line in answer.splitlines() if line.strip()][:HEAD_LINES]


def _is_content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith(("%", "#"))


def _first_match(patterns: tuple[re.Pattern[str], ...], answer: str) -> str:
    for pattern in patterns:
        found = pattern.search(answer)
        if found:
            start = answer.rfind("\n", 0, found.start()) + 1
            end = answer.find("\n", found.end())
            return answer[start : end if end != -1 else len(answer)].strip()[:120]
    return ""


def answer_dates(answer: str) -> tuple[date | None, date | None]:
    """(registered on, expires on) from the first field of each kind that parses; else None."""
    registered_at = expires_at = None
    for field, value in _FIELD.findall(answer):
        key = field.strip().lower()
        if registered_at is None and key in REGISTERED_KEYS:
            registered_at = parse_answer_date(value)
        elif expires_at is None and key in EXPIRES_KEYS:
            expires_at = parse_answer_date(value)
    return registered_at, expires_at


def parse_answer_date(value: str) -> date | None:
    """The date forms registries use: 2001-02-03[T...], 2001.02.03, 2001/02/03, 03.02.2001,
    03-Feb-2001 and 03/02/2001 (read day first, as the registries that use it do)."""
    text = value.strip().split()[0] if value.strip() else ""
    for pattern, order in (
        (r"(\d{4})[-./](\d{1,2})[-./](\d{1,2})", "ymd"),
        (r"(\d{1,2})[-./](\d{1,2})[-./](\d{4})", "dmy"),
        (r"(\d{1,2})-([A-Za-z]{3})[A-Za-z]*-(\d{4})", "dMy"),
    ):
        found = re.match(pattern, text)
        if not found:
            continue
        first, second, third = found.groups()
        try:
            if order == "ymd":
                return date(int(first), int(second), int(third))
            if order == "dmy":
                return date(int(third), int(second), int(first))
            month = _MONTHS.get(second.lower())
            return date(int(third), month, int(first)) if month else None
        except ValueError:
            return None
    try:  # anything else ISO 8601 may still parse (e.g. a bare year-week is not worth guessing)
        return datetime.fromisoformat(text).date()
    except ValueError:
        return None
