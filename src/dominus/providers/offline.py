"""Providers without the network. `offline_providers`: every fact from the five files of a
directory, by default the bundled SAMPLE DATA (the `sample` providers: demos and tests).
`NoNetworkAvailability`: what DNS and RDAP say when there is no network and no file to ask
(the `offline` providers, which read the user's own data files: ADR 0044).

Nothing in `sample_data/` is real market data; reports built from it must say so
(ProviderSet.is_sample).
"""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

from dominus.providers.comparable_sales import load_comparable_sales
from dominus.providers.dns import RegisteredNamesDns
from dominus.providers.keyword_data import load_keyword_data
from dominus.providers.models import Availability, DnsVerdict, RdapRecord, StopSignal
from dominus.providers.names import name_to_look_up
from dominus.providers.rdap import RecordsRdap
from dominus.providers.sets import ProviderSet
from dominus.providers.trademarks import MarksFileSource


def _sample_dir() -> Path:
    # The package is installed as plain files (never zipped), so as_file hands back the real
    # directory and the context manager has nothing to clean up.
    with as_file(files("dominus.providers") / "sample_data") as path:
        return Path(path)


SAMPLE_DATA_DIR: Path = _sample_dir()
SAMPLE_INPUT_PATH: Path = SAMPLE_DATA_DIR / "sample_input.json"


def offline_providers(sample_dir: Path = SAMPLE_DATA_DIR) -> ProviderSet:
    """Providers reading `registered.txt`, `rdap_records.csv`, `marks.csv`, `keywords.csv` and
    `comps.csv` from `sample_dir`. Raises ProviderDataError if a file is missing or malformed,
    except the marks file, whose absence the trademark gate reports as "unverified"."""
    sample_dir = Path(sample_dir)
    is_sample = sample_dir.resolve() == SAMPLE_DATA_DIR.resolve() or _labelled_sample(sample_dir)
    return ProviderSet(
        dns=RegisteredNamesDns(sample_dir / "registered.txt"),
        rdap=RecordsRdap(sample_dir / "rdap_records.csv", "sample" if is_sample else "file"),
        trademarks=MarksFileSource(sample_dir / "marks.csv"),
        keyword_data=load_keyword_data(sample_dir / "keywords.csv"),
        comparable_sales=load_comparable_sales(sample_dir / "comps.csv"),
        is_sample=is_sample,
        label="offline (SAMPLE DATA)" if is_sample else f"offline files in {sample_dir}",
    )


def _labelled_sample(directory: Path) -> bool:
    """A copy of the sample files elsewhere is still sample data: each starts `# SAMPLE DATA`."""
    for name in ("keywords.csv", "comps.csv"):
        try:
            with (directory / name).open(encoding="utf-8-sig") as file:
                if file.readline().strip().upper().startswith("# SAMPLE DATA"):
                    return True
        except OSError:
            continue
    return False


# Who answered an offline availability question, in an RDAP record's `source`.
NO_NETWORK_SOURCE = "offline"
NO_NETWORK_DETAIL = "not checked: offline providers have no network and no availability file"


class NoNetworkAvailability:
    """DNS and RDAP for the `offline` providers: with no network and no file listing the names,
    nothing can say whether a name is free, so every answer is UNKNOWN (never "available",
    which would let a name through to be registered; never "registered" either)."""

    def check(self, domain: str, stop: StopSignal | None = None) -> DnsVerdict:
        return DnsVerdict(name_to_look_up(domain).domain, Availability.UNKNOWN, NO_NETWORK_DETAIL)

    def lookup(self, domain: str, stop: StopSignal | None = None) -> RdapRecord:
        return RdapRecord(
            name_to_look_up(domain).domain,
            Availability.UNKNOWN,
            detail=NO_NETWORK_DETAIL,
            source=NO_NETWORK_SOURCE,
        )
