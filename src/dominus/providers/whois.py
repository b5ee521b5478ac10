"""WHOIS (RFC 3912) for TLDs without an RDAP service: the registry's port-43 server, asked once
per domain, with RDAP's retries, timeouts and conservatism.

The exchange is RFC 3912 in full: connect to the server's TCP port 43, send the name and CRLF,
read until the server closes. It is written here rather than taken from a library because the
PyPI clients either pick the server themselves (asking whois.iana.org or following referrals
over the network behind the caller's back), shell out to a `whois` binary, hard-code port 43
(so no loopback test), read without a size cap, or turn socket errors into answer text (which
a classifier would then read as a registered domain). See ADR 0015.

How an answer is read (available / registered / rate-limited) is in `whois_answers`. Every
attempt waits its turn at the rate gate of the server (`whois:<server>`, `rate_gate.py`); a
rate-limit answer pauses that key, for every lookup, for the attempt's backoff.
"""

from __future__ import annotations

import random
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass

from dominus.jobs.backoff import Backoff
from dominus.providers.models import Availability, RdapRecord, StopSignal
from dominus.providers.names import name_to_look_up
from dominus.providers.rate_gate import RateGate, pauses_only, whois_key
from dominus.providers.whois_answers import AnswerKind, AnswerVerdict, classify
from dominus.providers.whois_servers import WhoisServer, WhoisServers

WHOIS_PORT = 43
# Registry answers are a few KiB; anything past this is not an answer we can trust to read.
MAX_ANSWER_BYTES = 64 * 1024
SOURCE = "whois"
# RDAP's and WHOIS's retries: base, 2 × base, 4 × base ..., each ± 20 % so that parallel workers
# do not retry in lockstep; no cap, since `max_attempts` bounds them.
LOOKUP_RETRY_JITTER = 0.2


def lookup_backoff(base_seconds: float) -> Backoff:
    """The wait between an RDAP or WHOIS lookup's attempts."""
    return Backoff(base_seconds, jitter=LOOKUP_RETRY_JITTER)


class WhoisExchangeError(Exception):
    """The exchange failed (timeout, refused connection, reset): worth another attempt."""


class OversizedAnswerError(Exception):
    """The server sent more than MAX_ANSWER_BYTES: not a WHOIS answer we can read."""


def exchange(
    host: str,
    port: int,
    query: str,
    timeout_seconds: float,
    max_bytes: int = MAX_ANSWER_BYTES,
) -> str:
    """One RFC 3912 exchange: `query` CRLF out, everything up to the server's close back.

    `timeout_seconds` bounds the whole exchange (connect, send, every read), not each read, so
    a server trickling bytes cannot hold a lookup for longer. The answer is decoded as UTF-8,
    undecodable bytes replaced (some registries still answer in Latin-1; the patterns that
    decide are ASCII)."""
    deadline = time.monotonic() + timeout_seconds
    received = bytearray()
    try:
        with socket.create_connection((host, port), timeout=timeout_seconds) as connection:
            connection.settimeout(_remaining(deadline, timeout_seconds))
            connection.sendall(query.encode("ascii") + b"\r\n")
            while True:
                connection.settimeout(_remaining(deadline, timeout_seconds))
                chunk = connection.recv(8192)
                if not chunk:
                    break
                received += chunk
                if len(received) > max_bytes:
                    raise OversizedAnswerError(f"answer over {max_bytes // 1024} KiB")
    except TimeoutError as exc:
        raise WhoisExchangeError(f"timeout after {timeout_seconds:g} s") from exc
    except OSError as exc:  # refused, reset, unreachable, name not resolved
        raise WhoisExchangeError(f"{type(exc).__name__}: {exc}") from exc
    return received.decode("utf-8", errors="replace")


def _remaining(deadline: float, timeout_seconds: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError(f"no answer within {timeout_seconds:g} s")
    return left


@dataclass(frozen=True)
class _Retry:
    problem: str  # what went wrong, for the detail once attempts run out
    rate_limited: bool = False  # the server said so: pause it for everyone


class WhoisClient:
    """Availability from the registry's WHOIS server, for domains whose TLD is in `servers`.

    Retries as HttpRdapClient does: a timeout, a connection error, an empty answer or a
    rate-limit answer is tried again after 1 s, 2 s, 4 s ... (± 20 %), up to `max_attempts`
    in all, then UNKNOWN. Never AVAILABLE unless the answer matched a "no match" pattern."""

    def __init__(
        self,
        servers: WhoisServers,
        timeout_seconds: float,
        max_attempts: int = 3,
        backoff_base_seconds: float = 1.0,
        *,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        gate: RateGate | None = None,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.servers = servers
        self.timeout_seconds = timeout_seconds
        self.max_attempts = max_attempts
        self.backoff_base_seconds = backoff_base_seconds
        self._backoff = lookup_backoff(backoff_base_seconds)
        self.max_answer_bytes = max_answer_bytes
        self._sleep = sleep
        self._rng = rng or random.Random()
        # Without a gate of the process, this client's own: no limits, but pauses honoured.
        self.gate = gate if gate is not None else pauses_only(sleep)

    def server_for(self, domain: str) -> WhoisServer | None:
        return self.servers.server_for(domain)

    def lookup(self, domain: str, stop: StopSignal | None = None) -> RdapRecord:
        wanted = name_to_look_up(domain)  # ASCII labels: what registries index
        domain = wanted.domain
        if wanted.problem is not None:
            return _record(domain, Availability.UNKNOWN, wanted.detail)
        server = self.servers.server_for(domain)
        if server is None:
            tld = domain.rsplit(".", 1)[-1]
            return _record(domain, Availability.UNKNOWN, f"no WHOIS server known for .{tld}")
        key = whois_key(server.label)
        problem = ""
        for attempt in range(1, self.max_attempts + 1):
            if not self.gate.acquire(key, stop):
                return _record(domain, Availability.UNKNOWN, "stopped")
            try:
                outcome = self._attempt(domain, server)
            finally:
                self.gate.finished(key)
            if isinstance(outcome, RdapRecord):
                return outcome
            problem = outcome.problem
            delay = self._backoff.delay(attempt, self._rng.random)
            if outcome.rate_limited:
                self.gate.pause(key, delay, f"{problem} for {domain}")
                delay = 0.0  # the next attempt waits out the pause at the gate
            if attempt == self.max_attempts:
                break
            if delay <= 0:
                continue
            if stop is not None:
                if stop.wait(delay):
                    return _record(domain, Availability.UNKNOWN, "stopped")
            else:
                self._sleep(delay)
        attempts = "attempt" if self.max_attempts == 1 else "attempts"
        return _record(
            domain,
            Availability.UNKNOWN,
            f"{problem} after {self.max_attempts} {attempts} at WHOIS {server.label}",
        )

    def _attempt(self, domain: str, server: WhoisServer) -> RdapRecord | _Retry:
        try:
            answer = exchange(
                server.host, server.port, domain, self.timeout_seconds, self.max_answer_bytes
            )
        except WhoisExchangeError as exc:
            return _Retry(str(exc))
        except OversizedAnswerError as exc:
            # Asking again would bring the same flood; and half an answer decides nothing.
            return _record(domain, Availability.UNKNOWN, f"{exc} from WHOIS {server.label}")
        return _interpret(domain, server, classify(answer, server.host))


def _interpret(domain: str, server: WhoisServer, verdict: AnswerVerdict) -> RdapRecord | _Retry:
    where = f"WHOIS {server.label}"
    if verdict.kind is AnswerKind.RATE_LIMITED:
        return _Retry(f"rate limited ({verdict.matched!r})", rate_limited=True)  # like a 429
    if verdict.kind is AnswerKind.EMPTY:
        return _Retry("empty answer")
    if verdict.kind is AnswerKind.REFUSED:
        return _record(domain, Availability.UNKNOWN, f"refused at {where}: {verdict.matched!r}")
    if verdict.kind is AnswerKind.AVAILABLE:
        return _record(domain, Availability.AVAILABLE, f"no match at {where}: {verdict.matched!r}")
    return RdapRecord(
        domain,
        Availability.REGISTERED,
        registered_at=verdict.registered_at,
        expires_at=verdict.expires_at,
        detail=f"record found at {where}",
        source=SOURCE,
    )


def _record(domain: str, availability: Availability, detail: str) -> RdapRecord:
    return RdapRecord(domain, availability, detail=detail, source=SOURCE)
