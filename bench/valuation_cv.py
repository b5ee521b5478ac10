"""Cross-validate value-model candidates on the training rows only (never the held-out parts).

    python3 bench/valuation_cv.py [--shared DIR] [--folds 5] [--only NAME ...]

The held-out parts are set apart first, exactly as bench/valuation_fit.py sets them apart (the
NameBio file's latest 20 % by date; a seeded 25 % of the public sales, stratified by price
band), and never read here. The remaining rows are split into 5 folds (the public sales spread
evenly over the folds, band by band); each candidate is fitted on 4 folds and measured on the
fifth, with the 4 folds as its comparables. Printed per candidate: the figures on the NameBio
rows, on the public rows, and on both together (a "wide" set from $100 to eight figures, as the
measuring team's is).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from dominus.valuation.comparables import ComparablesIndex  # noqa: E402
from dominus.valuation.fitting import FitOptions, fit_model, model_predictions  # noqa: E402
from dominus.valuation.metrics import Prediction, figures, price_band  # noqa: E402
from dominus.valuation.sales import Sale  # noqa: E402
from valuation_fit import candidates, held_out_split, shared_data  # noqa: E402

SEED = 11


def folds_of(namebio: Sequence[Sale], public: Sequence[Sale], folds: int) -> list[int]:
    """A fold for each row of namebio + public: NameBio at random, the public sales dealt
    round-robin band by band after a seeded shuffle (so every fold sees every band)."""
    generator = np.random.default_rng(SEED)
    assignment = [int(value) for value in generator.permutation(len(namebio)) % folds]
    order = [int(value) for value in generator.permutation(len(public))]
    order.sort(key=lambda position: public[position].price)
    public_folds = [0] * len(public)
    for rank, position in enumerate(order):
        public_folds[position] = rank % folds
    return assignment + public_folds


def cross_validate(
    namebio: Sequence[Sale],
    public: Sequence[Sale],
    options: FitOptions,
    public_weight: float,
    folds: int,
) -> dict[str, list[Prediction]]:
    rows = [*namebio, *public]
    weights = [1.0] * len(namebio) + [public_weight] * len(public)
    fold_of = folds_of(namebio, public, folds)
    found: dict[str, list[Prediction]] = {"namebio": [], "public": []}
    for fold in range(folds):
        train = [row for row, f in zip(rows, fold_of, strict=True) if f != fold]
        train_weights = [w for w, f in zip(weights, fold_of, strict=True) if f != fold]
        fitted = fit_model(train, train_weights, options)
        index = ComparablesIndex(train)
        test_n = [row for row, f in zip(namebio, fold_of, strict=False) if f == fold]
        test_p = [row for row, f in zip(public, fold_of[len(namebio) :], strict=True) if f == fold]
        found["namebio"] += model_predictions(fitted.model, test_n, index)
        found["public"] += model_predictions(fitted.model, test_p, index)
    found["wide"] = found["namebio"] + found["public"]
    return found


def summary_cv(found: dict[str, list[Prediction]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for part, predictions in found.items():
        result[part] = figures(predictions).to_dict()
    bands: dict[str, list[Prediction]] = {}
    for prediction in found["wide"]:
        bands.setdefault(price_band(prediction.realised), []).append(prediction)
    result["bands"] = {band: figures(items).to_dict() for band, items in bands.items()}
    result["balanced_spearman"] = balanced_spearman(found["namebio"], found["public"])
    for venue_class in ("wholesale", "retail"):
        chosen = [p for p in found["namebio"] if p.venue_class == venue_class]
        result[f"namebio {venue_class}"] = figures(chosen).to_dict()
    return result


def balanced_spearman(namebio: list[Prediction], public: list[Prediction]) -> float:
    """The mean Spearman over 20 draws of the public sales with as many NameBio sales: a wide
    set from $100 to eight figures in which the top of the market is not a rounding error."""
    generator = np.random.default_rng(SEED)
    values = []
    for _ in range(20):
        chosen = generator.choice(len(namebio), size=len(public), replace=False)
        drawn = [namebio[int(i)] for i in chosen] + public
        value = figures(drawn).spearman
        values.append(value if value is not None else 0.0)
    return float(np.mean(values))


def show_cv(name: str, result: dict[str, Any], seconds: float) -> None:
    print(f"== {name} ({seconds:.0f} s)")
    for part in ("namebio", "namebio wholesale", "namebio retail", "public", "wide"):
        f = result[part]
        print(
            f"  {part:17s} n={f['n']:5d} spearman={_f(f['spearman'])} "
            f"err={_f(f['median_abs_log10_error'])} within2x={_f(f['within_2x'])} "
            f"r2={_f(f['r2_log'])} bias={_f(f['bias'])} p10-p90={_f(f['coverage'])}"
        )
    print(f"  balanced wide spearman={result['balanced_spearman']:.3f}")
    sys.stdout.flush()


def _f(value: float | None) -> str:
    return "  -  " if value is None else f"{value:6.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=shared_data())
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    (namebio, _), (public, _) = held_out_split(args.shared)
    for name, (options, weight) in candidates().items():
        if args.only and not any(part in name for part in args.only):
            continue
        started = time.perf_counter()
        result = summary_cv(cross_validate(namebio, public, options, weight, args.folds))
        show_cv(name, result, time.perf_counter() - started)


if __name__ == "__main__":
    main()
