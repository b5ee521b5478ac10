"""Made-up sales for the value model's tests: invented names and prices, no real sale.

The prices follow a simple made-up rule (short names, common words and .com dear; digits,
hyphens and long names cheap; retail venues dearer than wholesale), with a deterministic
wobble, so a fitted model has something to find.
"""

from __future__ import annotations

import random
from datetime import date, timedelta

from dominus.valuation.sales import Sale

WORDS = ("cloud", "nest", "home", "river", "stone", "bright", "pixel", "maple", "swift", "ocean")
TLDS = ("com", "com", "com", "net", "org", "io", "de", "xyz")
VENUES = ("GoDaddy", "DropCatch", "Namecheap", "Sedo", "Afternic", "Dynadot")


def made_up_sales(count: int = 160, seed: int = 3) -> list[Sale]:
    generator = random.Random(seed)
    sales: list[Sale] = []
    start = date(2024, 1, 1)
    for index in range(count):
        kind = index % 4
        if kind == 0:
            label = generator.choice(WORDS)
        elif kind == 1:
            label = generator.choice(WORDS) + generator.choice(WORDS)
        elif kind == 2:
            label = str(generator.randint(100, 99999))
        else:
            label = generator.choice(WORDS) + "-" + str(generator.randint(1, 99))
        tld = generator.choice(TLDS)
        venue = generator.choice(VENUES)
        price = 300.0 * (4.0 if kind == 0 else 1.5 if kind == 1 else 0.8 if kind == 2 else 0.4)
        price *= 3.0 if tld == "com" else 1.0
        price *= 5.0 if venue in {"Sedo", "Afternic"} else 1.0
        price *= generator.uniform(0.6, 1.6)
        sales.append(
            Sale(f"{label}.{tld}", round(price, 2), start + timedelta(days=index // 4), venue)
        )
    return sales


def as_csv(sales: list[Sale], header: str = "domain,price,date,venue") -> str:
    lines = [header]
    for sale in sales:
        lines.append(f"{sale.domain},{sale.price},{sale.date.isoformat()},{sale.venue}")
    return "\n".join(lines) + "\n"
