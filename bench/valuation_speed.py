"""How long the value model takes to appraise 10,000 names with 10,000 comparable sales loaded.

    python3 bench/valuation_speed.py [--names N] [--comps N] [--names-file FILE]

The names and the comparable sales are made up here (word pairs, short letter and digit names,
hyphens, across a dozen TLDs; seeded, so every run appraises the same ones) unless a file of
names is given. The figure is wall time in this fresh process, cold caches included: reading
the names file, loading the model and the word lists, indexing the comparables, appraising
(with explanations and comparables) every name.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from dominus.valuation.comparables import ComparablesIndex  # noqa: E402
from dominus.valuation.model import load_model  # noqa: E402
from dominus.valuation.sales import Sale  # noqa: E402

WORDS = [
    "cloud",
    "nest",
    "home",
    "river",
    "stone",
    "bright",
    "pixel",
    "maple",
    "swift",
    "ocean",
    "solar",
    "green",
    "trade",
    "shop",
    "smart",
    "data",
    "fast",
    "health",
    "pay",
    "crypto",
    "loan",
    "travel",
    "hotel",
    "pet",
    "food",
    "car",
    "bike",
    "legal",
    "tax",
    "fit",
    "yoga",
    "gold",
    "coffee",
    "wine",
    "photo",
    "music",
    "game",
    "kids",
    "baby",
    "real",
    "estate",
    "bank",
    "invest",
    "media",
    "design",
    "studio",
]
TLDS = ("com", "com", "com", "com", "net", "org", "io", "ai", "co", "de", "xyz", "app", "shop")
VENUES = ("GoDaddy", "DropCatch", "Namecheap", "Dynadot", "Sedo", "Afternic", "Sav.com")


def made_up_name(generator: random.Random) -> str:
    kind = generator.random()
    if kind < 0.55:
        label = generator.choice(WORDS) + generator.choice(WORDS)
    elif kind < 0.7:
        label = generator.choice(WORDS)
    elif kind < 0.8:
        label = "".join(generator.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(4))
    elif kind < 0.9:
        label = str(generator.randint(10, 999_999))
    else:
        label = generator.choice(WORDS) + "-" + generator.choice(WORDS)
    return f"{label}.{generator.choice(TLDS)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=10_000)
    parser.add_argument("--comps", type=int, default=10_000)
    parser.add_argument("--names-file", type=Path)
    args = parser.parse_args()
    generator = random.Random(11)
    start = date(2024, 1, 1)
    comps = [
        Sale(
            made_up_name(generator),
            round(generator.lognormvariate(6, 1.2), 2),
            start + timedelta(days=generator.randint(0, 280)),
            generator.choice(VENUES),
        )
        for _ in range(args.comps)
    ]
    with tempfile.TemporaryDirectory() as scratch:
        names_file = args.names_file or Path(scratch) / "names.txt"
        if args.names_file is None:
            names_file.write_text("\n".join(made_up_name(generator) for _ in range(args.names)))
        began = time.perf_counter()
        names = [line.strip() for line in names_file.read_text().splitlines() if line.strip()]
        model = load_model()
        loaded = time.perf_counter()
        index = ComparablesIndex(
            comps,
            half_life_years=model.comparables_term.half_life_years,
            k=model.comparables_term.k,
        )
        indexed = time.perf_counter()
        appraisals = model.appraise_many(names, index, date(2024, 10, 15))
        done = time.perf_counter()
    used = sum(1 for appraisal in appraisals if appraisal.comparables)
    print(f"names appraised:        {len(appraisals):,}")
    print(f"comparable sales:       {len(comps):,} ({used:,} names had comparables)")
    print(f"read names + load model {loaded - began:6.2f} s")
    print(f"index comparables       {indexed - loaded:6.2f} s")
    print(f"appraise (explained)    {done - indexed:6.2f} s")
    each = (done - began) / len(names) * 1e3
    print(f"total                   {done - began:6.2f} s  ({each:.2f} ms a name)")


if __name__ == "__main__":
    main()
