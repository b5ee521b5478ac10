"""`dominus scoring config`: every scoring constant in effect, and the price table behind the money
gate."""

from __future__ import annotations

from typing import Any

import typer
from rich.table import Table

from dominus.cli.output import console, print_json
from dominus.config import load_settings
from dominus.scoring.prices import BUNDLED_PRICES_PATH, iana_tlds
from dominus.scoring.settings import describe, scoring_config

app = typer.Typer(help="The scoring engine's settings.", no_args_is_help=True)


@app.command("config")
def config(
    as_json: bool = typer.Option(False, "--json", help="Print a JSON document."),
) -> None:
    """Every SCORING_* value in effect (environment or default), its allowed range, and the TLD
    price table in use (bundled or TLD_PRICES_PATH) and the registrar prices (the bundled table,
    under REGISTRAR_PRICES_PATH when set). Invalid settings: one line, exit 2."""
    settings = load_settings()
    scoring = scoring_config(settings)
    rows = describe(settings, scoring)
    table = scoring.prices
    prices: dict[str, Any] = {
        "source": table.source,
        "path": settings.TLD_PRICES_PATH or str(BUNDLED_PRICES_PATH),
        "currency": table.currency,
        "iana_tld_list": iana_tlds().version,
        "prices": [
            {"tld": price.tld, "registration": price.registration, "renewal": price.renewal}
            for price in table.prices
        ],
    }
    registrars = scoring.registrar_table()
    names = sorted({row.registrar for row in registrars.rows})
    registrar_prices = {
        "source": registrars.source,
        "currency": registrars.currency,
        "rows": len(registrars.rows),
        "registrars": names,
    }
    if as_json:
        print_json(
            {"settings": rows, "price_table": prices, "registrar_price_table": registrar_prices}
        )
        return
    # One line a setting (the names are long; a table would wrap in a terminal). A value that
    # differs from its default is marked with * and shows the default.
    width = max(len(row["variable"]) for row in rows)
    for row in rows:
        changed = row["value"] != row["default"]
        limits = "" if row["range"] is None else f"  [{row['range'][0]:g}..{row['range'][1]:g}]"
        default = f"  (default {row['default']})" if changed else ""
        console.print(
            f"{'*' if changed else ' '} {row['variable']:<{width}} = {row['value']}{limits}"
            f"{default}  {row['help']}",
            markup=False,
        )
    console.print(
        f"TLD prices ({prices['currency']} a year) from {prices['source']}; TLDs checked "
        f"against IANA's list {prices['iana_tld_list']}"
    )
    price_table = Table("tld", "registration", "renewal")
    for price in prices["prices"]:
        price_table.add_row(
            f".{price['tld']}", f"{price['registration']:,.2f}", f"{price['renewal']:,.2f}"
        )
    console.print(price_table)
    console.print(
        f"Registrar prices ({registrars.currency}): {len(registrars.rows)} registrar × TLD rows "
        f"of {', '.join(names)}, from {registrars.source}",
        markup=False,
    )
