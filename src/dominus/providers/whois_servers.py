"""Which WHOIS server answers for which TLD: the `whois:` line of IANA's root zone database.

Only TLDs with no RDAP service need one. A snapshot ships in `data/whois_servers.json`:

    {"description": ..., "publication": "YYYY-MM-DD", "source": ...,
     "servers": {"uk": {"host": "whois.nic.uk", "as_of": "2015-07-22"}, ...}}

`host` may carry a port (`127.0.0.1:4343`, `[::1]:4343`) or a separate integer `port`; the
default is 43. WHOIS_SERVERS_PATH points at another file in the same format.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dominus.providers.errors import ProviderDataError

BUNDLED_WHOIS_SERVERS_PATH = Path(__file__).parent / "data" / "whois_servers.json"
DEFAULT_PORT = 43
_HOST = re.compile(r"^(?:\[(?P<v6>[0-9a-fA-F:.]+)\]|(?P<name>[A-Za-z0-9.-]+))(?::(?P<port>\d+))?$")
_TLD = re.compile(r"^[a-z0-9-]+(?:\.[a-z0-9-]+)*$")


@dataclass(frozen=True)
class WhoisServer:
    host: str
    port: int = DEFAULT_PORT

    @property
    def label(self) -> str:
        """How the server is named in details: the host, and the port when it is not 43."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == DEFAULT_PORT else f"{host}:{self.port}"


@dataclass(frozen=True)
class WhoisServers:
    servers: dict[str, WhoisServer] = field(default_factory=dict)  # tld -> server
    publication: str = ""

    @classmethod
    def parse(cls, document: Any, where: Path | str = "WHOIS server list") -> WhoisServers:
        """Validate a server list; ProviderDataError names the file and the bad entry."""
        if not isinstance(document, dict) or not isinstance(document.get("servers"), dict):
            raise ProviderDataError(where, 'not a JSON object with a "servers" object')
        servers: dict[str, WhoisServer] = {}
        for tld, entry in document["servers"].items():
            key = str(tld).lower().strip(".")
            if not _TLD.match(key):
                raise ProviderDataError(where, f"{tld!r} is not a TLD")
            servers[key] = _server(where, key, entry)
        publication = document.get("publication", "")
        return cls(servers, publication if isinstance(publication, str) else "")

    @classmethod
    def load(cls, path: Path = BUNDLED_WHOIS_SERVERS_PATH) -> WhoisServers:
        try:
            document = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ProviderDataError(path, "file not found") from None
        except (OSError, ValueError) as exc:
            raise ProviderDataError(path, f"cannot read the WHOIS server list: {exc}") from exc
        return cls.parse(document, path)

    def server_for(self, name: str) -> WhoisServer | None:
        """The server for a TLD or a whole domain name, by the longest matching suffix."""
        labels = name.lower().strip(".").split(".")
        for start in range(len(labels)):
            server = self.servers.get(".".join(labels[start:]))
            if server is not None:
                return server
        return None


def _server(where: Path | str, tld: str, entry: object) -> WhoisServer:
    if isinstance(entry, str):
        entry = {"host": entry}
    if not isinstance(entry, dict) or not isinstance(entry.get("host"), str):
        raise ProviderDataError(where, f'.{tld}: expected {{"host": "whois.example"}}')
    found = _HOST.match(entry["host"].strip())
    if not found:
        raise ProviderDataError(where, f".{tld}: {entry['host']!r} is not a host name")
    port = found["port"] or entry.get("port", DEFAULT_PORT)
    if isinstance(port, bool) or not str(port).isdigit() or not 0 < int(port) < 65536:
        raise ProviderDataError(where, f".{tld}: port {port!r} is not a TCP port")
    return WhoisServer(found["v6"] or found["name"].lower(), int(port))
