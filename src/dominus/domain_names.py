"""The one rule for a domain name: lower-cased, IDNA-normalised (UTS #46, as browsers do),
checked against the DNS limits. A name that fails is recorded with the reason, never silently
dropped.

Every domain DOMINUS takes in (run input, closeout lists, the offline providers' files, names a
provider is asked about) goes through `normalise_domain`, so one set of rules decides what a
valid name is. An ASCII label starting `xn--` (an A-label) is held to the same IDNA 2008 rules as
the Unicode it stands for: typing the punycode must not get past a check the Unicode would fail."""

from __future__ import annotations

import re
from dataclasses import dataclass

import idna

MAX_DOMAIN_LENGTH = 253
MAX_LABEL_LENGTH = 63
A_LABEL_PREFIX = "xn--"
_LDH_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_TLD = re.compile(r"^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$")
_INNER_SPACES = re.compile(r"\s+")


class InvalidNameError(ValueError):
    """The message says why the name is not a registrable domain."""


@dataclass(frozen=True)
class DomainName:
    ascii: str  # what DNS and RDAP see: `xn--bcher-kva.com`
    unicode: str  # what a person reads: `bücher.com`

    @property
    def label(self) -> str:
        """The second-level label, without the TLD (`cloudnest` of `cloudnest.com`)."""
        return self.ascii.split(".", 1)[0]

    @property
    def tld(self) -> str:
        return self.ascii.split(".", 1)[1]


def keyword_domain(keyword: str, tld: str) -> DomainName:
    """`cloud storage` → `cloudstorage.<tld>`; a keyword that already has a dot is a domain."""
    compact = _INNER_SPACES.sub("", keyword.strip())
    if not compact:
        raise InvalidNameError("empty keyword")
    if "." in compact.strip("."):
        return normalise_domain(compact)
    return normalise_domain(f"{compact}.{tld}")


def normalise_domain(raw: str) -> DomainName:
    text = raw.strip().rstrip(".").lower()
    if not text:
        raise InvalidNameError("empty name")
    if any(character.isspace() for character in text):
        raise InvalidNameError("contains spaces")
    if text.startswith("."):
        raise InvalidNameError("starts with a dot (a name begins with its first label)")
    labels = text.split(".")
    if len(labels) < 2:
        raise InvalidNameError("no TLD (a domain needs at least two labels)")
    try:
        ascii_labels = [_ascii_label(label) for label in labels]
    except idna.IDNAError as error:
        raise InvalidNameError(f"not a valid internationalised name: {error}") from None
    ascii_name = ".".join(ascii_labels)
    _check_limits(ascii_labels, ascii_name)
    try:
        unicode_name = idna.decode(ascii_name)
    except idna.IDNAError:
        unicode_name = ascii_name
    return DomainName(ascii=ascii_name, unicode=unicode_name)


def _ascii_label(label: str) -> str:
    if not label:
        raise InvalidNameError("empty label (two dots in a row)")
    if not label.isascii():
        return idna.encode(label, uts46=True).decode("ascii")
    if label.startswith(A_LABEL_PREFIX):
        return _checked_a_label(label)
    return label  # checked by the LDH rule below; idna would reject some valid ASCII forms


def _checked_a_label(label: str) -> str:
    """`label` (lower-case) if it is a valid A-label: its punycode decodes, the U-label passes
    IDNA 2008 (no emoji, no disallowed or unassigned code points, contextual and bidi rules), and
    encoding that U-label again gives back this very A-label. The round trip refuses the
    non-canonical spellings a decoder tolerates, so one name never has two ASCII forms."""
    try:
        unicode_label = idna.ulabel(label)  # decodes, then idna.check_label on the U-label
        canonical = idna.alabel(unicode_label).decode("ascii")
    except UnicodeError as error:  # idna.IDNAError and the punycode codec's errors
        raise InvalidNameError(f"label {label!r} is not a valid A-label: {error}") from None
    if canonical != label:
        raise InvalidNameError(
            f"label {label!r} is not a valid A-label: {unicode_label!r} encodes as {canonical!r}"
        )
    return label


def _check_limits(labels: list[str], name: str) -> None:
    if len(name) > MAX_DOMAIN_LENGTH:
        raise InvalidNameError(f"longer than {MAX_DOMAIN_LENGTH} characters")
    for label in labels:
        if len(label) > MAX_LABEL_LENGTH:
            raise InvalidNameError(f"label {label[:20]}… longer than {MAX_LABEL_LENGTH} characters")
        if not _LDH_LABEL.match(label):
            raise InvalidNameError(
                f"label {label!r} must be letters, digits and inner hyphens only"
            )
        if label[2:4] == "--" and not label.startswith("xn--"):
            raise InvalidNameError(f"label {label!r} has hyphens in positions 3 and 4")
    if not _TLD.match(labels[-1]):
        raise InvalidNameError(f"{labels[-1]!r} is not a valid top-level domain")


def split_domain(domain: str) -> tuple[str, str]:
    """`"cloudnest.com"` → `("cloudnest", "com")`; `"shop.co.uk"` → `("shop", "co.uk")`.

    Candidates are always `label.suffix`, so the label is everything before the first dot and the
    suffix everything after it (lower-cased; a trailing root dot is dropped). A name without a
    dot is all label, with an empty suffix."""
    name = domain.strip().lower().rstrip(".")
    label, _, suffix = name.partition(".")
    return label, suffix
