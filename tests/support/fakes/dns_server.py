"""A real UDP DNS server on a loopback port (never the internet), answering per name."""

from __future__ import annotations

import socket
import threading

import dns.message
import dns.rcode
import dns.rdatatype
import dns.rrset

from dominus.providers.dns import canaries_for

# What a fake server does for a name: answer NS, answer SOA (for SOA queries only), NXDOMAIN,
# NOERROR with an empty answer, SERVFAIL, or drop the query (forces a client timeout).
Behaviour = str


class FakeDnsServer:
    """`canaries`: answer the names a resolver checker asks first to trust a resolver (iana.org,
    the TLD's registry name) as a resolver on a working network does; False stands for one that
    denies everything (no internet behind it). A canary named in `zones` follows its zone."""

    def __init__(
        self, zones: dict[str, Behaviour], default: Behaviour = "nxdomain", *, canaries: bool = True
    ) -> None:
        self.zones = zones
        self.default = default
        self.canaries = canaries
        self.queries: list[tuple[str, str]] = []  # (name, query type), in arrival order
        self.canary_queries: list[tuple[str, str]] = []  # the canaries', apart
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.05)
        self.address = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                wire, peer = self.sock.recvfrom(4096)
            except TimeoutError:
                continue
            reply = self._answer(dns.message.from_wire(wire))
            if reply is not None:
                self.sock.sendto(reply.to_wire(), peer)

    def _answer(self, query: dns.message.Message) -> dns.message.Message | None:
        question = query.question[0]
        name = question.name.to_text(omit_final_dot=True)
        qtype = dns.rdatatype.to_text(question.rdtype)
        canary = name in canaries_for(name.rsplit(".", 1)[-1])
        (self.canary_queries if canary else self.queries).append((name, qtype))
        behaviour = self.zones.get(name, "ns" if canary and self.canaries else self.default)
        if behaviour == "drop":
            return None
        response = dns.message.make_response(query)
        if behaviour == "nxdomain":
            response.set_rcode(dns.rcode.NXDOMAIN)
        elif behaviour == "servfail":
            response.set_rcode(dns.rcode.SERVFAIL)
        elif behaviour == "ns" and question.rdtype == dns.rdatatype.NS:
            response.answer.append(
                dns.rrset.from_text(question.name, 300, "IN", "NS", "ns1.example.net.")
            )
        elif behaviour == "soa" and question.rdtype == dns.rdatatype.SOA:
            response.answer.append(
                dns.rrset.from_text(
                    question.name, 300, "IN", "SOA", "ns1.example.net. host.example.net. 1 2 3 4 5"
                )
            )
        # "nodata" (and NS/SOA behaviours asked the other type): NOERROR, empty answer.
        return response
