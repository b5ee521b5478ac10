"""`dominus rdap refresh`: update the RDAP bootstrap (TLD → RDAP server) from IANA."""

from __future__ import annotations

from pathlib import Path

import typer

from dominus.cli.output import console
from dominus.cli.runtime import configure_logging
from dominus.config import load_settings
from dominus.providers.rdap_bootstrap import DEFAULT_BOOTSTRAP_URL, refresh_bootstrap
from dominus.providers.setup import REFRESHED_BOOTSTRAP_PATH

app = typer.Typer(help="The RDAP bootstrap.", no_args_is_help=True)


@app.command("refresh")
def refresh(
    url: str = typer.Option(DEFAULT_BOOTSTRAP_URL, "--url", help="Where to download it from."),
    output: Path | None = typer.Option(
        None,
        "--output",
        help="Where to write it [RDAP_BOOTSTRAP_PATH, else ./data/].",
    ),
) -> None:
    """Download IANA's RDAP DNS bootstrap, check it, and replace the local copy atomically (the
    old copy stays on any failure). The pipeline uses it from the next run on."""
    settings = load_settings()
    configure_logging(settings.DOMINUS_LOG_LEVEL)
    target = output or Path(settings.RDAP_BOOTSTRAP_PATH or REFRESHED_BOOTSTRAP_PATH)
    count = refresh_bootstrap(url, target)
    console.print(f"wrote {target}: RDAP servers for {count} TLDs")
    if output is not None and str(output) != settings.RDAP_BOOTSTRAP_PATH:
        console.print(f"set RDAP_BOOTSTRAP_PATH={output} for the pipeline to use it")
