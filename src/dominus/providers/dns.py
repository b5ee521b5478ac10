"""DNS pre-filter: a cheap first look at whether a domain is registered, before RDAP.

A registered domain is delegated, so its parent zone answers NS for it (and usually the domain
answers SOA). NXDOMAIN, or NOERROR with neither NS nor SOA, means "probably available" only: a
registered domain can have no delegation (e.g. on hold), which is why RDAP confirms afterwards.
One resolver's word is not enough to call a name available when several are configured: a
resolver can be stale, filtered or lying, so "available" needs two resolvers to agree while a
single "registered" answer is enough to drop the name (the cheap, safe direction).

A resolver's NXDOMAIN is believed only once it has shown it can find names that surely exist
(the canaries: `iana.org` and the TLD's registry name, see `canaries_for`), asked once per
resolver and canary for the checker's life (one run). Without a network behind it, a resolver
may answer NXDOMAIN, SERVFAIL or nothing for every name; its answers for that TLD are then not
asked for at all, and a name no resolver can be believed about is UNKNOWN with `canary_failed`
set: the run says availability could not be checked (ADR 0044), never that the name is free.

Bounds: each query (NS, then SOA when NS says nothing; a truncated UDP answer asked again over
TCP) is one dnspython exchange whose `timeout` is a single expiration for the whole of it
(sending and every read), DNS_TIMEOUT_MS; a DNS message is at most 64 KiB by its format. The
stop signal given to `check` is looked at before every query: once it is set no further query
goes out and the name is UNKNOWN ("stopped").
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import dns.exception
import dns.flags
import dns.message
import dns.name
import dns.query
import dns.rcode
import dns.rdatatype

from dominus.providers.csvfiles import data_lines, read_text
from dominus.providers.models import Availability, DnsVerdict, StopSignal
from dominus.providers.names import listed_domain, name_to_look_up

# A name every working resolver finds, whatever the TLD asked about.
ALWAYS_THERE = "iana.org"
# The registry's own name for the TLDs whose registry does not answer at nic.<tld>.
REGISTRY_NAMES = {"com": "verisign.com", "net": "gtld-servers.net", "org": "pir.org"}


def canaries_for(tld: str) -> tuple[str, ...]:
    """The names a resolver must find before its answers about `tld`'s names are believed:
    `iana.org`, and the registry's name (ICANN's registry agreements reserve nic.<tld> for it)."""
    tld = tld.strip().lower().rstrip(".")
    return (ALWAYS_THERE, REGISTRY_NAMES.get(tld, f"nic.{tld}"))


class DnsChecker(Protocol):
    def check(self, domain: str, stop: StopSignal | None = None) -> DnsVerdict: ...


@dataclass(frozen=True)
class Resolver:
    host: str
    port: int

    @property
    def label(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def parse_resolver(text: str) -> Resolver:
    """`1.1.1.1`, `127.0.0.1:5353`, `::1` or `[::1]:5353`."""
    text = text.strip()
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest.removeprefix(":") or "53"
    elif text.count(":") == 1:
        host, port = text.split(":")
    else:
        host, port = text, "53"
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"not a resolver address (IP or IP:port): {text!r}")
    return Resolver(host, int(port))


class _StoppedError(Exception):
    """The stop signal was set before a query went out."""


@dataclass(frozen=True)
class _Answer:
    availability: Availability
    reason: str  # "NXDOMAIN", "NS present", "timeout", ...


class ResolverDnsChecker:
    """Asks each configured resolver directly (no system resolver, no cache), over UDP with a TCP
    retry when the answer is truncated."""

    def __init__(self, resolvers: Sequence[str], timeout_seconds: float) -> None:
        if not resolvers:
            raise ValueError("at least one resolver is needed")
        if timeout_seconds <= 0:
            raise ValueError("timeout_seconds must be positive")
        self.resolvers = [parse_resolver(r) for r in resolvers]
        self.timeout_seconds = timeout_seconds
        # (resolver, canary) -> None when found, else why not; asked once, by one thread.
        self._canaries: dict[tuple[Resolver, str], str | None] = {}
        self._canaries_lock = threading.Lock()

    def check(self, domain: str, stop: StopSignal | None = None) -> DnsVerdict:
        wanted = name_to_look_up(domain)
        domain = wanted.domain
        if wanted.problem is not None:
            return DnsVerdict(domain, Availability.UNKNOWN, wanted.detail)
        try:
            name = dns.name.from_text(domain)
        except dns.exception.DNSException as exc:
            return DnsVerdict(domain, Availability.UNKNOWN, f"not a valid domain name: {exc}")
        tld = domain.rsplit(".", 1)[-1]
        answers: list[tuple[Resolver, _Answer]] = []
        doubts: list[str] = []
        for resolver in self.resolvers:
            try:
                doubt = self._doubt(resolver, tld, stop)
                if doubt is not None:
                    doubts.append(doubt)
                    answers.append((resolver, _Answer(Availability.UNKNOWN, doubt)))
                    continue
                answer = self._ask(resolver, name, stop)
            except _StoppedError:
                return DnsVerdict(domain, Availability.UNKNOWN, "stopped")
            if answer.availability is Availability.REGISTERED:
                # A veto: no later answer could change the outcome, so stop asking.
                return DnsVerdict(
                    domain, Availability.REGISTERED, f"{answer.reason} at {resolver.label}"
                )
            answers.append((resolver, answer))
        if len(doubts) == len(self.resolvers):
            detail = f"not checked: {'; '.join(doubts)} (no network?)"
            return DnsVerdict(domain, Availability.UNKNOWN, detail, canary_failed=True)
        return DnsVerdict(domain, *self._combine(answers))

    def _doubt(self, resolver: Resolver, tld: str, stop: StopSignal | None) -> str | None:
        """Why `resolver` is not believed about `tld`'s names (a canary it did not find), or
        None. Each canary is asked once; the lock makes the threads of a stage wait for it
        rather than all ask it at once."""
        with self._canaries_lock:
            for canary in canaries_for(tld):
                key = (resolver, canary)
                if key not in self._canaries:
                    self._canaries[key] = self._canary_missing(resolver, canary, stop)
                missing = self._canaries[key]
                if missing is not None:
                    return f"canary {canary} not found ({missing} at {resolver.label})"
        return None

    def _canary_missing(
        self, resolver: Resolver, canary: str, stop: StopSignal | None
    ) -> str | None:
        """None when the resolver finds `canary` (any NOERROR answer: the name exists, as a
        zone or inside one), else what it said instead."""
        try:
            response = self._query(resolver, dns.name.from_text(canary), dns.rdatatype.NS, stop)
        except dns.exception.Timeout:
            return f"timeout after {self.timeout_seconds:g} s"
        except (dns.exception.DNSException, OSError, ValueError) as exc:
            return f"error ({type(exc).__name__}: {exc})"
        rcode = response.rcode()
        return None if rcode == dns.rcode.NOERROR else dns.rcode.to_text(rcode)

    def _combine(self, answers: list[tuple[Resolver, _Answer]]) -> tuple[Availability, str]:
        available = [(r, a) for r, a in answers if a.availability is Availability.AVAILABLE]
        needed = 1 if len(self.resolvers) == 1 else 2
        if len(available) >= needed:
            reasons = {a.reason for _, a in available}
            if len(reasons) == 1:
                labels = " and ".join(r.label for r, _ in available)
                return Availability.AVAILABLE, f"{reasons.pop()} at {labels}"
            return Availability.AVAILABLE, "; ".join(
                f"{a.reason} at {r.label}" for r, a in available
            )
        described = "; ".join(f"{a.reason} at {r.label}" for r, a in answers)
        if available:
            return Availability.UNKNOWN, f"available unconfirmed by a second resolver ({described})"
        return Availability.UNKNOWN, described

    def _ask(self, resolver: Resolver, name: dns.name.Name, stop: StopSignal | None) -> _Answer:
        try:
            answer = _classify(self._query(resolver, name, dns.rdatatype.NS, stop), name)
            if answer is None:
                # NOERROR without NS: the name exists in some form (or the resolver's view is
                # odd); a zone apex answers SOA, so ask for that before calling it available.
                answer = _classify(self._query(resolver, name, dns.rdatatype.SOA, stop), name)
            return answer or _Answer(Availability.AVAILABLE, "no NS or SOA")
        except dns.exception.Timeout:
            return _Answer(Availability.UNKNOWN, f"timeout after {self.timeout_seconds:g} s")
        except (dns.exception.DNSException, OSError, ValueError) as exc:
            # Malformed replies, ICMP port unreachable (ConnectionRefusedError), bad addresses.
            return _Answer(Availability.UNKNOWN, f"error ({type(exc).__name__}: {exc})")

    def _query(
        self,
        resolver: Resolver,
        name: dns.name.Name,
        rdtype: dns.rdatatype.RdataType,
        stop: StopSignal | None,
    ) -> dns.message.Message:
        _raise_if_stopped(stop)
        query = dns.message.make_query(name, rdtype)
        response = dns.query.udp(
            query, resolver.host, timeout=self.timeout_seconds, port=resolver.port
        )
        if response.flags & dns.flags.TC:
            _raise_if_stopped(stop)
            response = dns.query.tcp(
                query, resolver.host, timeout=self.timeout_seconds, port=resolver.port
            )
        return response


def _raise_if_stopped(stop: StopSignal | None) -> None:
    if stop is not None and stop.is_set():
        raise _StoppedError


def _classify(response: dns.message.Message, name: dns.name.Name) -> _Answer | None:
    """The answer this response gives, or None for NOERROR with neither NS nor SOA."""
    rcode = response.rcode()
    if rcode == dns.rcode.NXDOMAIN:
        return _Answer(Availability.AVAILABLE, "NXDOMAIN")
    if rcode != dns.rcode.NOERROR:
        return _Answer(Availability.UNKNOWN, dns.rcode.to_text(rcode))
    for rdtype in (dns.rdatatype.NS, dns.rdatatype.SOA):
        if _has_record(response, name, rdtype):
            return _Answer(Availability.REGISTERED, f"{rdtype.name} present")
    return None


def _has_record(
    response: dns.message.Message, name: dns.name.Name, rdtype: dns.rdatatype.RdataType
) -> bool:
    return any(rrset.name == name and rrset.rdtype == rdtype for rrset in response.answer)


class RegisteredNamesDns:
    """Offline stand-in: a text file of registered domains, one per line (`#` comments)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._registered = frozenset(
            listed_domain(self.path, number, "domain", line.split("#", 1)[0].strip())
            for number, line in data_lines(read_text(self.path))
        )

    def check(self, domain: str, stop: StopSignal | None = None) -> DnsVerdict:
        wanted = name_to_look_up(domain)
        domain = wanted.domain
        if wanted.problem is not None:
            return DnsVerdict(domain, Availability.UNKNOWN, wanted.detail)
        if domain in self._registered:
            return DnsVerdict(domain, Availability.REGISTERED, f"listed in {self.path.name}")
        return DnsVerdict(domain, Availability.AVAILABLE, f"not listed in {self.path.name}")
