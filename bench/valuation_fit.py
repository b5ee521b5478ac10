"""Refit the bundled value model (src/dominus/valuation/data/model.json) from ../shared.

    python3 bench/valuation_fit.py [--shared DIR] [--no-candidates] [--out PATH]

1. Holds out the latest 20 % by date of the NameBio training file and a fixed random 30 % of
   the compiled public sales (seed 7), fits each candidate method on the rest and measures it
   (and both baselines) on both held-out parts.
2. Refits the chosen method on every row and writes the model file, with the held-out figures
   of step 1 and every candidate's figures in it (docs/adr/0040-valuation-model.md).

The NameBio rows are read from ../shared/data (never copied into the project: the model file
holds fitted parameters and aggregates only). Exit 2 when the training file is not there.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from dominus.valuation.comparables import ComparablesIndex  # noqa: E402
from dominus.valuation.features import FEATURE_NAMES  # noqa: E402
from dominus.valuation.fitting import FitOptions, fit_model, measure  # noqa: E402
from dominus.valuation.model import ALL_FEATURES, MARKET_FEATURES  # noqa: E402
from dominus.valuation.sales import read_sales  # noqa: E402
from dominus.valuation.training import (  # noqa: E402
    BY_DATE,
    BY_SEED,
    SalesSource,
    metrics_document,
)

NAMEBIO = "sales-namebio-2024-train.csv"
PUBLIC = ROOT / "src" / "dominus" / "valuation" / "data" / "public_sales.csv"
BUNDLED = ROOT / "src" / "dominus" / "valuation" / "data" / "model.json"
PUBLIC_WEIGHT = 10.0
NAMEBIO_HOLDOUT = 0.2
PUBLIC_HOLDOUT = 0.3
VERSION = "2024.10-1"
INTERACTIONS = tuple(name for name in FEATURE_NAMES if "_x_" in name)
SHAPE_ONLY = tuple(
    name
    for name in FEATURE_NAMES
    if not name.startswith(("word", "label", "language", "one_word", "two_common", "plural"))
    and name not in {"words", "fragments"}
    and "_x_" not in name
)


def shared_data() -> Path:
    """../shared/data beside the checkout (a worktree one level deeper looks one higher)."""
    for parent in (ROOT.parent, ROOT.parent.parent):
        if (parent / "shared" / "data" / NAMEBIO).exists():
            return parent / "shared" / "data"
    return ROOT.parent / "shared" / "data"


def candidates() -> dict[str, tuple[FitOptions, float]]:
    """name → (options, public weight). The last is the chosen one."""
    full = FitOptions()
    return {
        "ridge, shape and TLD only (no words)": (
            replace(
                full, features=(*SHAPE_ONLY, *MARKET_FEATURES, "retail"), use_comparables=False
            ),
            PUBLIC_WEIGHT,
        ),
        "ridge, all features, no interactions, no comparables": (
            replace(
                full,
                features=tuple(n for n in ALL_FEATURES if n not in INTERACTIONS),
                use_comparables=False,
            ),
            PUBLIC_WEIGHT,
        ),
        "ridge, all features and interactions, no comparables": (
            replace(full, use_comparables=False),
            PUBLIC_WEIGHT,
        ),
        "ridge + comparables residual term, public weight 1": (full, 1.0),
        "ridge + comparables residual term, public weight 10 (chosen)": (full, PUBLIC_WEIGHT),
    }


def sources(shared: Path, public_weight: float) -> list[SalesSource]:
    return [
        SalesSource("namebio-2024-sample", read_sales(shared / NAMEBIO), 1.0, BY_DATE),
        SalesSource("public-sales", read_sales(PUBLIC), public_weight, BY_SEED, seed=7),
    ]


def summary(reports: dict[str, Any]) -> dict[str, Any]:
    return {
        source: {name: report.overall.to_dict() for name, report in by_name.items()}
        for source, by_name in reports.items()
    }


def show(title: str, reports: dict[str, Any]) -> None:
    print(f"== {title}")
    for source, by_name in reports.items():
        for name, report in by_name.items():
            o = report.overall
            print(
                f"  {source:22s} {name:12s} n={o.n:5d} spearman={_f(o.spearman)} "
                f"mae={_f(o.median_abs_log10_error)} within2x={_f(o.within_2x)} "
                f"r2={_f(o.r2_log)} bias={_f(o.bias)} coverage={_f(o.coverage)}"
            )


def _f(value: float | None) -> str:
    return "  -  " if value is None else f"{value:6.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=shared_data())
    parser.add_argument("--out", type=Path, default=BUNDLED)
    parser.add_argument("--no-candidates", action="store_true")
    args = parser.parse_args()
    if not (args.shared / NAMEBIO).exists():
        print(f"{args.shared / NAMEBIO} is not there: nothing to refit", file=sys.stderr)
        sys.exit(2)
    tried: dict[str, Any] = {}
    chosen = list(candidates().items())[-1]
    runs = list(candidates().items()) if not args.no_candidates else [chosen]
    result = None
    for name, (options, weight) in runs:
        started = time.perf_counter()
        result = _holdout(args.shared, options, weight)
        show(f"{name} ({time.perf_counter() - started:.1f} s)", result.reports)
        tried[name] = summary(result.reports)
    assert result is not None
    options, weight = chosen[1]
    every = sources(args.shared, weight)
    rows = [sale for source in every for sale in source.sales]
    weights = [source.weight for source in every for _ in source.sales]
    final = fit_model(rows, weights, options, version=VERSION, sources=[s.name for s in every])
    model = final.model
    model.metrics = metrics_document(result, NAMEBIO_HOLDOUT)
    model.metrics["holdout_by_source"] = {
        "namebio-2024-sample": f"latest {NAMEBIO_HOLDOUT:.0%} by date",
        "public-sales": f"random {PUBLIC_HOLDOUT:.0%}, seed 7",
    }
    index = ComparablesIndex(rows)
    fitted_with = measure(model, every[1].sales, index)
    model.metrics["public_sales_fitted_with"] = {
        name: report.to_dict() for name, report in fitted_with.items()
    }
    show("public sales, final model fitted with them", {"public-sales": fitted_with})
    model.candidates = tried
    model.save(args.out)
    print(f"wrote {args.out}: {model.info.trained_on}")


def _holdout(shared: Path, options: FitOptions, weight: float) -> Any:
    namebio, public = sources(shared, weight)
    from dominus.valuation.training import HoldoutResult, split  # noqa: PLC0415

    kept_n, held_n = split(namebio, NAMEBIO_HOLDOUT)
    kept_p, held_p = split(public, PUBLIC_HOLDOUT)
    train = kept_n + kept_p
    weights = [1.0] * len(kept_n) + [weight] * len(kept_p)
    fitted = fit_model(train, weights, options, sources=[namebio.name, public.name])
    index = ComparablesIndex(train)
    result = HoldoutResult(fitted)
    result.reports = {
        namebio.name: measure(fitted.model, held_n, index),
        public.name: measure(fitted.model, held_p, index),
    }
    result.held_out = {namebio.name: len(held_n), public.name: len(held_p)}
    return result


if __name__ == "__main__":
    main()
