"""Which RDAP server answers for which TLD, from IANA's bootstrap file (RFC 9224).

The document is `{"version": "1.0", "publication": ..., "services": [[[tlds...], [urls...]]]}`.
A snapshot ships in `data/rdap_dns_bootstrap.json`; `refresh_bootstrap` replaces it with IANA's
current file (registries move their RDAP servers now and then). The download is one bounded
exchange (`dominus.bounded_http`): REFRESH_DEADLINE_SECONDS for all of it, redirects included,
at most MAX_BOOTSTRAP_BYTES, and no redirect to another scheme or to a loopback or private host.
The source itself must be HTTPS (plain HTTP only from this machine): the file names the
servers every lookup asks, so no one on the path may rewrite it.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from dominus.bounded_http import ExchangeError, fetch
from dominus.host_names import is_loopback
from dominus.providers.errors import BootstrapError

DEFAULT_BOOTSTRAP_URL = "https://data.iana.org/rdap/dns.json"
BUNDLED_BOOTSTRAP_PATH = Path(__file__).parent / "data" / "rdap_dns_bootstrap.json"
REFRESH_DEADLINE_SECONDS = 30.0
# IANA's file is about 100 KB; room for it to grow many times over, not for a flood.
MAX_BOOTSTRAP_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class RdapBootstrap:
    services: dict[str, tuple[str, ...]] = field(default_factory=dict)  # tld -> base URLs
    publication: str = ""

    @classmethod
    def parse(cls, document: Any) -> RdapBootstrap:
        """Validate an RFC 9224 DNS bootstrap document; BootstrapError says what is wrong."""
        if not isinstance(document, dict):
            raise BootstrapError("bootstrap document is not a JSON object")
        services = document.get("services")
        if not isinstance(services, list):
            raise BootstrapError('bootstrap document has no "services" list')
        mapping: dict[str, tuple[str, ...]] = {}
        for index, service in enumerate(services):
            if (
                not isinstance(service, list)
                or len(service) < 2
                or not _is_str_list(service[0])
                or not _is_str_list(service[1])
            ):
                raise BootstrapError(f"bootstrap service #{index} is not [[tld, ...], [url, ...]]")
            urls = [_with_slash(u) for u in service[1] if u.startswith(("https://", "http://"))]
            # RFC 9224 lets clients prefer HTTPS; plain HTTP is kept only as a last resort.
            urls.sort(key=lambda url: not url.startswith("https://"))
            for tld in service[0]:
                mapping[tld.lower().strip(".")] = tuple(urls)
        if not mapping:
            raise BootstrapError("bootstrap document lists no TLDs")
        publication = document.get("publication", "")
        return cls(mapping, publication if isinstance(publication, str) else "")

    @classmethod
    def load(cls, path: Path = BUNDLED_BOOTSTRAP_PATH) -> RdapBootstrap:
        try:
            document = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BootstrapError(f"cannot read the RDAP bootstrap file {path}: {exc}") from exc
        return cls.parse(document)

    def base_urls(self, name: str) -> list[str]:
        """Base URLs (each ending in `/`) for a TLD or a whole domain name, by the longest
        matching suffix ("example.co.uk" prefers a "co.uk" entry over "uk"); [] if none."""
        labels = name.lower().strip(".").split(".")
        for start in range(len(labels)):
            urls = self.services.get(".".join(labels[start:]))
            if urls:
                return list(urls)
        return []


def _is_str_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _with_slash(url: str) -> str:
    return url if url.endswith("/") else url + "/"


def _check_source(url: str) -> None:
    """The file decides which hosts every lookup asks, so it must come over HTTPS: plain HTTP
    only from this machine (a local mirror), where no one on the path can rewrite it."""
    parsed = httpx.URL(url) if url.startswith(("https://", "http://")) else None
    if parsed is None or not parsed.host:
        raise BootstrapError(f"the bootstrap URL {url!r} is not an http(s) URL")
    if parsed.scheme == "http" and not is_loopback(parsed.host):
        raise BootstrapError(
            f"refusing {url}: the bootstrap names the servers every lookup asks, so it is "
            "fetched over https (plain http only from this machine)"
        )


def refresh_bootstrap(
    url: str = DEFAULT_BOOTSTRAP_URL,
    path: Path = BUNDLED_BOOTSTRAP_PATH,
    client: httpx.Client | None = None,
) -> int:
    """Download the bootstrap document at `url`, check it, and replace `path` atomically (the
    old file stays untouched on any failure). Returns how many TLDs it maps."""
    _check_source(url)
    own_client = client is None
    http = client or httpx.Client()
    try:
        answer = fetch(
            http, url, deadline_seconds=REFRESH_DEADLINE_SECONDS, max_bytes=MAX_BOOTSTRAP_BYTES
        )
    except (ExchangeError, httpx.HTTPError) as exc:
        raise BootstrapError(f"cannot fetch {url}: {exc}") from exc
    finally:
        if own_client:
            http.close()
    if answer.status != 200:
        raise BootstrapError(f"fetching {url} answered HTTP {answer.status}")
    try:
        document = json.loads(answer.body)
    except (ValueError, RecursionError) as exc:
        raise BootstrapError(f"{url} did not return JSON: {exc}") from exc
    bootstrap = RdapBootstrap.parse(document)

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Same directory as the target, so os.replace is a rename on one filesystem (atomic).
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as temp:
            json.dump(document, temp, indent=1)
            temp.write("\n")
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
    return len(bootstrap.services)
