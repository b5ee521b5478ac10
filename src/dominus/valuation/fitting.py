"""Fitting the value model on sales, and measuring it on the sales it did not see.

    1. the TLD market (model.TldMarket) from the training sales; each training sale sees its
       TLD's market without itself (leave-one-out), as a new name would;
    2. a ridge regression of ln(price) on the features, standardised, its penalty chosen by
       k-fold cross-validation; the out-of-fold predictions are kept;
    3. the comparables term: each training sale's comparables among the other training sales
       (past ones only), read as their out-of-fold residuals; β and k0 by least squares over a
       grid of k0;
    4. intervals: the 10th and 90th percentiles of the out-of-fold residuals (2 and 3 together)
       per venue class and price level (conformal);
    5. both baselines (baselines.py) on the same sales.

`split_by_date` holds out the latest share of the sales by date; `fit_and_measure` fits on the
rest and stores the held-out figures of the model and both baselines in the model file.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any, Literal

import numpy as np

from dominus.valuation.baselines import ComparablesBaseline, NaiveBaseline
from dominus.valuation.comparables import ComparablesIndex
from dominus.valuation.metrics import Prediction, Report, evaluate, price_band
from dominus.valuation.model import (
    ALL_FEATURES,
    RETAIL_FEATURES,
    ComparablesTerm,
    Intervals,
    Matrix,
    TldMarket,
    ValueModel,
)
from dominus.valuation.sales import Sale
from dominus.valuation.tlds import split_domain, tld_group
from dominus.valuation.venues import VenueClass

Loss = Literal["squared", "absolute"]
MODEL_NAME = "dominus-value"
MARKET_COLUMN = ALL_FEATURES.index("tld_market")
RETAIL_MARKET_COLUMN = ALL_FEATURES.index("retail_x_tld_market")
RETAIL_COLUMN = ALL_FEATURES.index("retail")
INTERVAL_LEVELS = 3
MIN_LEVEL_SALES = 40
MIN_TLD_SALES = 5


@dataclass(frozen=True)
class FitOptions:
    holdout: float = 0.2
    lambdas: tuple[float, ...] = (1.0, 3.0, 10.0, 30.0, 100.0, 300.0)
    folds: int = 5
    seed: int = 20240917
    pseudo_weights: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0)
    half_life_years: float = 3.0
    k: int = 5
    shrinkage: float = 10.0
    use_comparables: bool = True
    features: tuple[str, ...] | None = None  # a subset of ALL_FEATURES (candidates); None: all
    # The retail head: the base regression is fitted without the retail terms and with each
    # sale's weight capped at `base_weight_cap` times the median weight, then the retail
    # terms on the retail sales' residuals with their full weights. The heavy public sales
    # then shape the retail value of the names they are like, not every wholesale value.
    retail_head: bool = True
    base_weight_cap: float = 1.0
    retail_stretch: bool = False  # the head also scales the base's own prediction (model.py)
    median_shift: bool = True  # P50 adds the class's median residual (a median, not a mean)
    # "squared": a ridge regression (the mean log price); "absolute": the same penalty on an
    # absolute loss (the median log price: P50 is a median, and sale prices are right-skewed)
    loss: Loss = "squared"
    # How many price levels (equal counts of the class's sales by predicted price) each venue
    # class's residual quantiles are taken in; each level keeps MIN_LEVEL_SALES sales at least
    interval_levels: int = INTERVAL_LEVELS


@dataclass
class Fitted:
    model: ValueModel
    lam: float
    cv_rmse: float
    notes: dict[str, Any] = field(default_factory=dict)


def split_by_date(sales: Sequence[Sale], holdout: float) -> tuple[list[Sale], list[Sale]]:
    """(training, held-out): the latest `holdout` share by date is held out (ties broken by
    name, so the split is the same on every run)."""
    ordered = sorted(sales, key=lambda sale: (sale.date, sale.domain, sale.price))
    cut = len(ordered) - round(len(ordered) * holdout)
    return ordered[:cut], ordered[cut:]


def split_by_seed(sales: Sequence[Sale], share: float, seed: int) -> tuple[list[Sale], list[Sale]]:
    """(kept, set apart): a random `share` set apart, the same for the same seed."""
    generator = np.random.default_rng(seed)
    order = generator.permutation(len(sales))
    cut = len(sales) - round(len(sales) * share)
    kept = sorted(int(position) for position in order[:cut])
    apart = sorted(int(position) for position in order[cut:])
    return [sales[i] for i in kept], [sales[i] for i in apart]


def split_stratified(
    sales: Sequence[Sale], share: float, seed: int
) -> tuple[list[Sale], list[Sale]]:
    """(kept, set apart): a random `share` of each price band set apart, the same for the same
    seed, so that a small file's hold-out has the bands of the whole file."""
    bands: dict[str, list[int]] = {}
    for position, sale in enumerate(sales):
        bands.setdefault(price_band(sale.price), []).append(position)
    generator = np.random.default_rng(seed)
    apart: set[int] = set()
    for band in sorted(bands):
        members = bands[band]
        order = generator.permutation(len(members))
        count = round(len(members) * share)
        apart.update(members[int(i)] for i in order[:count])
    kept = [sale for position, sale in enumerate(sales) if position not in apart]
    return kept, [sale for position, sale in enumerate(sales) if position in apart]


def fit_market(sales: Sequence[Sale], shrinkage: float) -> TldMarket:
    logs = [math.log(sale.price) for sale in sales]
    tlds: dict[str, list[float]] = {}
    groups: dict[str, list[float]] = {}
    for sale, value in zip(sales, logs, strict=True):
        tld = split_domain(sale.domain)[1]
        tlds.setdefault(tld, []).append(value)
        groups.setdefault(tld_group(tld).value, []).append(value)
    # A TLD seen fewer than MIN_TLD_SALES times is left to its group: the model file holds
    # aggregates of several sales, never one sale's price
    return TldMarket(
        tlds={
            key: (len(v), float(np.mean(v))) for key, v in tlds.items() if len(v) >= MIN_TLD_SALES
        },
        groups={key: (len(v), float(np.mean(v))) for key, v in groups.items()},
        overall=float(np.mean(logs)),
        shrinkage=shrinkage,
    )


def _leave_one_out_market(market: TldMarket, sales: Sequence[Sale], matrix: Matrix) -> None:
    """Each sale's TLD market without the sale itself (in place)."""
    for row, sale in enumerate(sales):
        tld = split_domain(sale.domain)[1]
        if tld not in market.tlds:
            continue  # its group's market, which the sale barely moves
        count, mean = market.tlds[tld]
        prior = market.group_prior(tld)
        own = math.log(sale.price)
        rest = count - 1
        rest_mean = (count * mean - own) / rest if rest else 0.0
        value = (rest * rest_mean + market.shrinkage * prior) / (rest + market.shrinkage)
        matrix[row, MARKET_COLUMN] = value
        matrix[row, RETAIL_MARKET_COLUMN] = value * matrix[row, RETAIL_COLUMN]


def ridge(
    matrix: Matrix, target: Matrix, weights: Matrix, lam: float, mask: Matrix
) -> tuple[float, Matrix, Matrix]:
    """Weighted ridge on standardised columns: (intercept, raw weights, centres). Columns
    where `mask` is 0 are left out (weight 0)."""
    centres, scale, standard = _standardise(matrix, weights, mask)
    mean_target = float(weights @ target / weights.sum())
    gram = standard.T @ (standard * weights[:, None]) + lam * np.eye(matrix.shape[1])
    coefficients = np.linalg.solve(gram, standard.T @ (weights * (target - mean_target)))
    return mean_target, coefficients / scale * mask, centres


ABSOLUTE_ROUNDS = 12
ABSOLUTE_FLOOR = 0.05  # residuals nearer than this (ln units) weigh as if this near


def linear_fit(
    matrix: Matrix, target: Matrix, weights: Matrix, lam: float, mask: Matrix, loss: Loss
) -> tuple[float, Matrix, Matrix]:
    """`ridge` for the squared loss; for the absolute loss, iteratively reweighted ridge: each
    round weighs a sale by its weight ÷ its last |residual| (the quadratic that touches |r| at
    the last residual), rescaled to the weights' own mean so that the penalty keeps its scale."""
    fitted = ridge(matrix, target, weights, lam, mask)
    if loss == "squared":
        return fitted
    for _ in range(ABSOLUTE_ROUNDS):
        residual = np.abs(target - _predict(*fitted, matrix))
        reweighted = weights / np.maximum(residual, ABSOLUTE_FLOOR)
        reweighted *= weights.sum() / reweighted.sum()
        fitted = _ridge_at(matrix, target, weights, reweighted, lam, mask)
    return fitted


def _ridge_at(
    matrix: Matrix, target: Matrix, weights: Matrix, fit_weights: Matrix, lam: float, mask: Matrix
) -> tuple[float, Matrix, Matrix]:
    """`ridge` with its columns standardised by `weights` and its loss weighted by
    `fit_weights` (the absolute loss's rounds keep one standardisation)."""
    centres, scale, standard = _standardise(matrix, weights, mask)
    design = np.hstack([np.ones((len(target), 1)), standard])
    gram = design.T @ (design * fit_weights[:, None])
    penalty = lam * np.eye(design.shape[1])
    penalty[0, 0] = 0.0  # the intercept is not shrunk
    solution = np.linalg.solve(gram + penalty, design.T @ (fit_weights * target))
    return float(solution[0]), solution[1:] / scale * mask, centres


def _standardise(matrix: Matrix, weights: Matrix, mask: Matrix) -> tuple[Matrix, Matrix, Matrix]:
    """(centres, scales, standardised masked columns), each column by the weighted mean and
    standard deviation (a constant column keeps scale 1)."""
    total = weights.sum()
    centres = (weights @ matrix) / total
    centred = matrix - centres
    scale = np.sqrt((weights @ centred**2) / total)
    scale[scale == 0] = 1.0
    return centres, scale, centred / scale * mask


def _predict(intercept: float, raw: Matrix, centres: Matrix, matrix: Matrix) -> Matrix:
    result: Matrix = intercept + (matrix - centres) @ raw
    return result


def _folds(size: int, folds: int, seed: int) -> Matrix:
    generator = np.random.default_rng(seed)
    assignment: Matrix = (generator.permutation(size) % folds).astype(np.float64)
    return assignment


def fit_model(
    sales: Sequence[Sale],
    weights: Sequence[float] | None = None,
    options: FitOptions | None = None,
    *,
    version: str = "1",
    sources: Sequence[str] = (),
) -> Fitted:
    """Fit the model on `sales` (weights per sale, 1 by default): steps 1–5 of the module
    docstring. The model's `trained_on` records the rows, the dates and `sources`."""
    options = options or FitOptions()
    if len(sales) < 20:
        raise ValueError(f"{len(sales)} sales are too few to fit a model (20 at least)")
    target = np.array([math.log(sale.price) for sale in sales])
    weight = np.ones(len(sales)) if weights is None else np.asarray(weights, dtype=float)
    weight = weight / weight.mean()
    market = fit_market(sales, options.shrinkage)
    skeleton = _skeleton(market)
    classes = [sale.venue_class for sale in sales]
    matrix = skeleton.design([sale.domain for sale in sales], classes)
    _leave_one_out_market(market, sales, matrix)
    mask = np.ones(len(ALL_FEATURES))
    if options.features is not None:
        mask = np.array([1.0 if name in options.features else 0.0 for name in ALL_FEATURES])
    if options.retail_head:
        lam, oof, cv_rmse, (intercept, raw, centres), stretch = _fit_with_retail_head(
            matrix, target, weight, mask, classes, options
        )
    else:
        stretch = (0.0, 0.0)
        lam, oof, cv_rmse = _choose_penalty(matrix, target, weight, mask, options)
        intercept, raw, centres = linear_fit(matrix, target, weight, lam, mask, options.loss)
    model = ValueModel(
        name=MODEL_NAME,
        version=version,
        intercept=intercept,
        weights=dict(zip(ALL_FEATURES, raw.tolist(), strict=True)),
        centres=dict(zip(ALL_FEATURES, centres.tolist(), strict=True)),
        market=market,
        intervals=Intervals({}, {}, {}, {}),
        comparables_term=ComparablesTerm(
            beta=0.0, half_life_years=options.half_life_years, k=options.k
        ),
        retail_stretch=stretch[0],
        stretch_pivot=stretch[1],
    )
    signal = np.zeros(len(sales))
    notes: dict[str, Any] = {}
    if options.use_comparables:
        index = ComparablesIndex(sales, half_life_years=options.half_life_years, k=options.k)
        term, signal, notes = _fit_comparables(model, index, sales, target, oof, weight, options)
        model.comparables_term = term
    total = oof + model.comparables_term.beta * signal
    model.intervals = _intervals(
        total, target, classes, weight, options.median_shift, options.interval_levels
    )
    model.baselines = _fit_baselines(sales, options)
    dates = sorted(sale.date for sale in sales)
    model.trained_on = {
        "rows": len(sales),
        "date_from": dates[0].isoformat(),
        "date_to": dates[-1].isoformat(),
        "sources": list(sources),
        "penalty": lam,
        "cv_rmse_ln": round(cv_rmse, 4),
    }
    return Fitted(model, lam, cv_rmse, notes)


def _skeleton(market: TldMarket) -> ValueModel:
    return ValueModel(
        name=MODEL_NAME,
        version="0",
        intercept=0.0,
        weights={},
        centres={},
        market=market,
        intervals=Intervals({}, {}, {}, {}),
        comparables_term=ComparablesTerm(),
    )


def _choose_penalty(
    matrix: Matrix, target: Matrix, weight: Matrix, mask: Matrix, options: FitOptions
) -> tuple[float, Matrix, float]:
    folds = _folds(len(target), options.folds, options.seed)
    best: tuple[float, float, Matrix] | None = None
    for lam in options.lambdas:
        oof = np.zeros(len(target))
        for fold in range(options.folds):
            train = folds != fold
            intercept, raw, centres = linear_fit(
                matrix[train], target[train], weight[train], lam, mask, options.loss
            )
            oof[~train] = _predict(intercept, raw, centres, matrix[~train])
        rmse = _cv_error(target - oof, weight, options.loss)
        if best is None or rmse < best[0]:
            best = (rmse, lam, oof)
    assert best is not None
    return best[1], best[2], best[0]


def _cv_error(residual: Matrix, weight: Matrix, loss: Loss) -> float:
    """The cross-validation's criterion: the weighted RMSE for the squared loss, the weighted
    mean absolute residual for the absolute loss."""
    if loss == "squared":
        return float(np.sqrt(weight @ residual**2 / weight.sum()))
    return float(weight @ np.abs(residual) / weight.sum())


RETAIL_MASK = np.array([1.0 if name in RETAIL_FEATURES else 0.0 for name in ALL_FEATURES])


def _fit_with_retail_head(
    matrix: Matrix,
    target: Matrix,
    weight: Matrix,
    mask: Matrix,
    classes: Sequence[VenueClass],
    options: FitOptions,
) -> tuple[float, Matrix, float, tuple[float, Matrix, Matrix], tuple[float, float]]:
    """(penalty, out-of-fold predictions, their weighted RMSE, (intercept, weights, centres)):
    the base regression without the retail terms on capped weights, then the retail terms
    fitted on the retail sales' out-of-fold base residuals (see FitOptions.retail_head)."""
    base_mask = mask * (1.0 - RETAIL_MASK)
    # The cap is relative to the typical sale's weight (the weights are scaled to mean 1)
    capped = np.minimum(weight, options.base_weight_cap * float(np.median(weight)))
    capped = capped / capped.mean()  # the penalty is set against weights of mean 1
    lam, oof, _ = _choose_penalty(matrix, target, capped, base_mask, options)
    intercept, raw, centres = linear_fit(matrix, target, capped, lam, base_mask, options.loss)
    retail_rows = np.array([item is VenueClass.RETAIL for item in classes])
    stretch = (0.0, 0.0)
    if retail_rows.sum() >= MIN_LEVEL_SALES:
        head_mask = mask * RETAIL_MASK
        head_mask[ALL_FEATURES.index("retail")] = 0.0  # constant on retail rows: the intercept
        # The last column is the base's own (out-of-fold) prediction: its weight is the stretch
        rows = np.hstack([matrix[retail_rows], oof[retail_rows, None]])
        head_mask = np.append(head_mask, 1.0 if options.retail_stretch else 0.0)
        residual = target[retail_rows] - oof[retail_rows]
        head_lam, head_oof, _ = _choose_penalty(
            rows, residual, weight[retail_rows], head_mask, options
        )
        head_intercept, head_raw, head_centres = linear_fit(
            rows, residual, weight[retail_rows], head_lam, head_mask, options.loss
        )
        # Wholesale rows have every retail term 0: centring them at 0 and folding the head's
        # intercept into the "retail" weight leaves wholesale predictions as the base made them
        raw = raw + head_raw[:-1]
        raw[ALL_FEATURES.index("retail")] = head_intercept - float(
            head_centres[:-1] @ head_raw[:-1]
        )
        centres = np.where(RETAIL_MASK > 0, 0.0, centres)
        stretch = (float(head_raw[-1]), float(head_centres[-1]))
        oof = oof.copy()
        oof[retail_rows] += head_oof
    rmse = float(np.sqrt(weight @ (target - oof) ** 2 / weight.sum()))
    return lam, oof, rmse, (intercept, raw, centres), stretch


def _fit_comparables(
    model: ValueModel,
    index: ComparablesIndex,
    sales: Sequence[Sale],
    target: Matrix,
    oof: Matrix,
    weight: Matrix,
    options: FitOptions,
) -> tuple[ComparablesTerm, Matrix, dict[str, Any]]:
    residual = target - oof
    index.residuals = residual.tolist()
    index.residuals_of = "fitting"
    sums = np.zeros((len(sales), 2))
    for row, sale in enumerate(sales):
        found = index.nearest(sale.domain, sale.date, exclude=row, k=options.k)
        sums[row, 0] = sum(w for _, _, w in found)
        sums[row, 1] = sum(w * residual[p] for p, _, w in found)
    best: tuple[float, float, float] | None = None
    for pseudo in options.pseudo_weights:
        signal = sums[:, 1] / (sums[:, 0] + pseudo)
        denominator = float(weight @ signal**2)
        beta = float(weight @ (signal * residual)) / denominator if denominator else 0.0
        beta = min(max(beta, 0.0), 1.5)
        error = float(weight @ (residual - beta * signal) ** 2)
        if best is None or error < best[0]:
            best = (error, pseudo, beta)
    assert best is not None
    _, pseudo, beta = best
    term = ComparablesTerm(beta, pseudo, options.half_life_years, options.k)
    signal = sums[:, 1] / (sums[:, 0] + pseudo)
    covered = float(np.mean(sums[:, 0] > 0))
    index.residuals = None
    index.residuals_of = None
    return term, signal, {"comparables_coverage": round(covered, 3)}


def weighted_quantile(values: Matrix, weights: Matrix, share: float) -> float:
    """The `share` quantile of `values`, each counted `weights` times (the fit's weights)."""
    order = np.argsort(values)
    cumulative = np.cumsum(weights[order])
    position = int(np.searchsorted(cumulative, share * cumulative[-1]))
    return float(values[order][min(position, len(values) - 1)])


def _intervals(
    predicted: Matrix,
    target: Matrix,
    classes: Sequence[VenueClass],
    weight: Matrix,
    median_shift: bool = True,
    most_levels: int = INTERVAL_LEVELS,
) -> Intervals:
    edges: dict[str, list[float]] = {}
    low: dict[str, list[float]] = {}
    mid: dict[str, list[float]] = {}
    high: dict[str, list[float]] = {}
    residual = target - predicted
    every = np.ones(len(target), dtype=bool)
    for venue_class in VenueClass:
        chosen = np.array([item is venue_class for item in classes])
        if chosen.sum() < MIN_LEVEL_SALES:
            chosen = every  # too few sales of the class: the pooled residuals
        levels = max(1, min(most_levels, int(chosen.sum()) // MIN_LEVEL_SALES))
        cuts = np.quantile(predicted[chosen], np.linspace(0, 1, levels + 1)[1:-1]).tolist()
        edges[venue_class.value] = [float(cut) for cut in cuts]
        level = np.searchsorted(np.asarray(cuts), predicted[chosen])
        residuals = residual[chosen]
        weights = weight[chosen]
        low[venue_class.value] = []
        mid[venue_class.value] = []
        high[venue_class.value] = []
        # One median shift per class (not per level), so that it never reorders two names
        middle = weighted_quantile(residuals, weights, 0.5) if median_shift else 0.0
        for index in range(levels):
            part, part_weights = residuals[level == index], weights[level == index]
            low[venue_class.value].append(weighted_quantile(part, part_weights, 0.1))
            mid[venue_class.value].append(middle)
            high[venue_class.value].append(weighted_quantile(part, part_weights, 0.9))
    return Intervals(edges, low, high, mid)


def _fit_baselines(sales: Sequence[Sale], options: FitOptions) -> dict[str, Any]:
    naive = NaiveBaseline.fit(sales)
    logs = np.array([math.log(sale.price) for sale in sales])
    classes = np.array([sale.venue_class.value for sale in sales])
    means = {
        venue_class.value: float(logs[classes == venue_class.value].mean())
        if (classes == venue_class.value).any()
        else float(logs.mean())
        for venue_class in VenueClass
    }
    index = ComparablesIndex(sales, half_life_years=options.half_life_years, k=options.k)
    found = [
        index.nearest(sale.domain, sale.date, exclude=row, k=options.k)
        for row, sale in enumerate(sales)
    ]
    best: tuple[float, ComparablesBaseline, Matrix] | None = None
    for pseudo in options.pseudo_weights:
        baseline = ComparablesBaseline(pseudo, means, {}, {}, options.k)
        predicted = np.array(
            [
                _comparables_log(baseline, means[sale.venue_class.value], index, hits)
                for sale, hits in zip(sales, found, strict=True)
            ]
        )
        error = float(np.mean((logs - predicted) ** 2))
        if best is None or error < best[0]:
            best = (error, baseline, predicted)
    assert best is not None
    _, baseline, predicted = best
    for venue_class in VenueClass:
        chosen = classes == venue_class.value
        residual = (logs - predicted)[chosen] if chosen.sum() >= 10 else logs - predicted
        baseline.low[venue_class.value] = float(np.quantile(residual, 0.1))
        baseline.high[venue_class.value] = float(np.quantile(residual, 0.9))
    return {"naive": naive.to_dict(), "comparables": baseline.to_dict()}


def _comparables_log(
    baseline: ComparablesBaseline,
    prior: float,
    index: ComparablesIndex,
    found: Sequence[tuple[int, float, float]],
) -> float:
    total = sum(weight for _, _, weight in found)
    weighted = sum(weight * index.log_price(position) for position, _, weight in found)
    return (weighted + baseline.pseudo_weight * prior) / (total + baseline.pseudo_weight)


# -- measuring -----------------------------------------------------------------------------


def model_predictions(
    model: ValueModel, sales: Sequence[Sale], comparables: ComparablesIndex | None
) -> list[Prediction]:
    """The model's range for each sale's venue class, each appraised on its sale date."""
    classes = [sale.venue_class for sale in sales]
    predicted = model.predict_log(
        [sale.domain for sale in sales],
        classes,
        comparables,
        todays=[_day_before(sale) for sale in sales],
    )
    result = []
    for row, sale in enumerate(sales):
        value = model.ranges(classes[row], predicted[row : row + 1])[0]
        result.append(_prediction(sale, value.p10, value.p50, value.p90))
    return result


def naive_predictions(model: ValueModel, sales: Sequence[Sale]) -> list[Prediction]:
    naive = NaiveBaseline.from_dict(model.baselines["naive"])
    return [_prediction(sale, *naive.predict(sale.domain)) for sale in sales]


def comparables_predictions(
    model: ValueModel, sales: Sequence[Sale], comparables: ComparablesIndex | None
) -> list[Prediction]:
    baseline = ComparablesBaseline.from_dict(model.baselines["comparables"])
    return [
        _prediction(
            sale,
            *baseline.predict(sale.domain, sale.venue_class.value, comparables, _day_before(sale)),
        )
        for sale in sales
    ]


def _day_before(sale: Sale) -> date:
    """A sale is measured with the comparables of the days before it: never itself, nor a sale
    of the same day it could not have known."""
    return sale.date - timedelta(days=1)


def _prediction(sale: Sale, p10: float, p50: float, p90: float) -> Prediction:
    return Prediction(
        domain=sale.domain,
        realised=sale.price,
        p10=p10,
        p50=p50,
        p90=p90,
        venue_class=sale.venue_class.value,
        tld_group=tld_group(split_domain(sale.domain)[1]).value,
    )


def measure(
    model: ValueModel, sales: Sequence[Sale], comparables: ComparablesIndex | None
) -> dict[str, Report]:
    """The figures of the model and of both baselines on `sales`."""
    return {
        "model": evaluate(model_predictions(model, sales, comparables)),
        "naive": evaluate(naive_predictions(model, sales)),
        "comparables": evaluate(comparables_predictions(model, sales, comparables)),
    }


def day(text: str) -> date:
    return date.fromisoformat(text)
