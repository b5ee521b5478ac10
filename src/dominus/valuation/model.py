"""The value model: a name → its wholesale and retail values, each as P10, P50 and P90.

    ln(price) = intercept + Σ weight_j × (x_j − centre_j)          the name and its market
              + β × Σ w_i r_i ÷ (Σ w_i + k0)                        its comparable sales

x are the name's features (features.py), the TLD's learned market (`TldMarket`: the typical
log price of the TLD's sales, shrunk towards its group's, and how deep the market is) and the
venue class with its interactions (the retail terms are 0 for the wholesale value). The second
line reads the comparable sales (comparables.py): r_i is how far comparable i sold above or below
this model's own appraisal of it, w_i its weight, k0 a pseudo-weight that keeps one weak
comparable from moving the value much, β how much of that evidence the model takes (fitted).

P10 and P90 are P50 × exp(q), q the 10th and 90th percentiles of the out-of-fold residuals of
the sale's venue class at that price level (conformal intervals, fitted in fitting.py): about
80 % of sales like the training ones fall inside.

The model is a JSON document (`to_dict`/`from_dict`), predicted with numpy alone: the fitting
code and whatever it used are not needed at run time. `load_model(None)` is the model named by
VALUATION_MODEL_PATH, else the bundled one.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from dominus.errors import InvalidInputError
from dominus.valuation.comparables import ComparablesIndex, UsedComparable
from dominus.valuation.features import FEATURE_NAMES, GROUPS, feature_row, name_features
from dominus.valuation.tlds import split_domain, tld_group
from dominus.valuation.venues import VenueClass

Matrix = npt.NDArray[np.float64]
MODEL_FORMAT = 1
BUNDLED_MODEL_PATH = Path(__file__).parent / "data" / "model.json"
MODEL_PATH_VARIABLE = "VALUATION_MODEL_PATH"
MARKET_FEATURES: tuple[str, ...] = ("tld_market", "tld_depth")
# The retail terms: 1 for the retail value, and retail × a name feature (0 for wholesale), so
# that the retail premium is learned per kind of name and the top of the market (public sales,
# nearly all retail) moves the retail value without moving the wholesale one.
RETAIL_SOURCES: dict[str, str] = {
    "retail_x_com": "tld_com",
    "retail_x_label_zipf": "label_zipf",
    "retail_x_length": "length",
    "retail_x_tld_market": "tld_market",
    "retail_x_one_word": "one_word",
    "retail_x_two_common_words": "two_common_words",
    "retail_x_word_zipf_mean": "word_zipf_mean",
    "retail_x_com_label_zipf": "com_x_label_zipf",
    "retail_x_com_short": "com_x_short",
    "retail_x_all_digits": "all_digits",
}
RETAIL_FEATURES: tuple[str, ...] = ("retail", "retail_x_short", *RETAIL_SOURCES)
ALL_FEATURES: tuple[str, ...] = (*FEATURE_NAMES, *MARKET_FEATURES, *RETAIL_FEATURES)
GROUP_OF: dict[str, str] = {
    **GROUPS,
    **{name: "tld" for name in MARKET_FEATURES},
    **{name: "venue" for name in RETAIL_FEATURES},
}
TOP_CONTRIBUTIONS = 5


class ModelFileError(InvalidInputError):
    """The value model file cannot be used."""


@dataclass(frozen=True)
class Range:
    """A value range in US dollars."""

    p10: float
    p50: float
    p90: float

    def to_dict(self) -> dict[str, float]:
        return {"p10": round(self.p10, 2), "p50": round(self.p50, 2), "p90": round(self.p90, 2)}


@dataclass(frozen=True)
class Contribution:
    """One part of the explanation: what it is, and what it adds to the retail P50 (what the
    value would lose without it, in dollars; negative when it lowers the value)."""

    label: str
    dollars: float
    factor: float  # the multiplicative effect: 2.0 doubles the value

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "dollars": round(self.dollars, 2),
            "factor": round(self.factor, 3),
        }


@dataclass(frozen=True)
class ModelInfo:
    name: str
    version: str
    trained_on: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "version": self.version, "trained_on": self.trained_on}


@dataclass(frozen=True)
class Appraisal:
    """The values of one name, with their explanation."""

    domain: str
    wholesale: Range
    retail: Range
    contributions: list[Contribution]
    comparables: list[UsedComparable]
    model: ModelInfo

    def value_for(self, venue_class: VenueClass | str) -> Range:
        return self.retail if VenueClass(venue_class) is VenueClass.RETAIL else self.wholesale

    def to_dict(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "wholesale": self.wholesale.to_dict(),
            "retail": self.retail.to_dict(),
            "model": self.model.to_dict(),
            "contributions": [item.to_dict() for item in self.contributions],
            "comparables": [item.to_dict() for item in self.comparables],
        }


@dataclass
class TldMarket:
    """Each TLD's market learned from sales: count and mean log price, per TLD and per group.
    A TLD's market value is its mean shrunk towards its group's (and the group's towards all
    sales') by `shrinkage` pseudo-sales, so a TLD seen twice is mostly its group."""

    tlds: dict[str, tuple[int, float]]
    groups: dict[str, tuple[int, float]]
    overall: float
    shrinkage: float = 10.0

    def group_prior(self, tld: str) -> float:
        count, mean = self.groups.get(tld_group(tld).value, (0, self.overall))
        return (count * mean + self.shrinkage * self.overall) / (count + self.shrinkage)

    def market(self, tld: str) -> tuple[float, float]:
        """(the TLD's smoothed mean log price, ln(1 + its number of sales))."""
        count, mean = self.tlds.get(tld, (0, 0.0))
        prior = self.group_prior(tld)
        value = (count * mean + self.shrinkage * prior) / (count + self.shrinkage)
        return value, math.log1p(count)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tlds": {key: [count, round(mean, 5)] for key, (count, mean) in self.tlds.items()},
            "groups": {key: [count, round(mean, 5)] for key, (count, mean) in self.groups.items()},
            "overall": self.overall,
            "shrinkage": self.shrinkage,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TldMarket:
        return cls(
            tlds={key: (int(value[0]), float(value[1])) for key, value in data["tlds"].items()},
            groups={key: (int(value[0]), float(value[1])) for key, value in data["groups"].items()},
            overall=float(data["overall"]),
            shrinkage=float(data["shrinkage"]),
        )


@dataclass
class Intervals:
    """Residual quantiles per venue class and price level: `edges` split the predicted log
    price into levels; `low[i]`, `mid[i]`, `high[i]` are the 10th, 50th and 90th percentile
    residuals of level i. The regression predicts a mean log price; adding the median residual
    makes P50 a median, as P10 and P90 are the 10th and 90th percentiles."""

    edges: dict[str, list[float]]
    low: dict[str, list[float]]
    high: dict[str, list[float]]
    mid: dict[str, list[float]] = field(default_factory=dict)

    def bounds(self, venue_class: str, predicted: Matrix) -> tuple[Matrix, Matrix, Matrix]:
        level = np.searchsorted(np.asarray(self.edges[venue_class]), predicted)
        low = np.asarray(self.low[venue_class])[level]
        high = np.asarray(self.high[venue_class])[level]
        mid = np.asarray(self.mid.get(venue_class, [0.0] * (len(self.edges[venue_class]) + 1)))
        middle = np.clip(mid[level], low, high)
        return low, middle, high

    def to_dict(self) -> dict[str, Any]:
        return {"edges": self.edges, "low": self.low, "mid": self.mid, "high": self.high}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Intervals:
        return cls(data["edges"], data["low"], data["high"], data.get("mid", {}))


@dataclass
class ComparablesTerm:
    beta: float = 0.0
    pseudo_weight: float = 1.0
    half_life_years: float = 3.0
    k: int = 5

    def to_dict(self) -> dict[str, Any]:
        return {
            "beta": self.beta,
            "pseudo_weight": self.pseudo_weight,
            "half_life_years": self.half_life_years,
            "k": self.k,
        }


@dataclass
class ValueModel:
    """A fitted value model (see the module docstring)."""

    name: str
    version: str
    intercept: float
    weights: dict[str, float]
    centres: dict[str, float]
    market: TldMarket
    intervals: Intervals
    comparables_term: ComparablesTerm
    trained_on: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    baselines: dict[str, Any] = field(default_factory=dict)
    candidates: dict[str, Any] = field(default_factory=dict)
    # The retail stretch: a retail value adds γ × (its wholesale value − pivot), so that the
    # retail premium grows with the name's quality (a top name's end user pays far more over
    # the investors' price than a middling name's does)
    retail_stretch: float = 0.0
    stretch_pivot: float = 0.0

    def __post_init__(self) -> None:
        self._weights = np.array([self.weights.get(name, 0.0) for name in ALL_FEATURES])
        self._centres = np.array([self.centres.get(name, 0.0) for name in ALL_FEATURES])
        self._not_retail = np.array(
            [0.0 if name in RETAIL_FEATURES else 1.0 for name in ALL_FEATURES]
        )
        self._retail_column = ALL_FEATURES.index("retail")
        groups = sorted(set(GROUP_OF.values()))
        self._groups = groups
        self._group_matrix = np.zeros((len(ALL_FEATURES), len(groups)))
        for position, feature in enumerate(ALL_FEATURES):
            self._group_matrix[position, groups.index(GROUP_OF[feature])] = 1.0

    @property
    def info(self) -> ModelInfo:
        rows = self.trained_on.get("rows", 0)
        span = f"{self.trained_on.get('date_from', '?')}..{self.trained_on.get('date_to', '?')}"
        sources = ", ".join(self.trained_on.get("sources", [])) or "unknown sources"
        return ModelInfo(self.name, self.version, f"{rows} sales {span} ({sources})")

    # -- the design matrix -------------------------------------------------------------

    def design(self, domains: Sequence[str], classes: Sequence[VenueClass]) -> Matrix:
        """One row of ALL_FEATURES per (domain, venue class)."""
        matrix = np.zeros((len(domains), len(ALL_FEATURES)))
        for row, (domain, venue_class) in enumerate(zip(domains, classes, strict=True)):
            matrix[row] = self.feature_values(domain, venue_class)
        return matrix

    def feature_values(self, domain: str, venue_class: VenueClass) -> list[float]:
        label, tld = split_domain(domain)
        names = name_features(domain)
        market, depth = self.market.market(tld)
        values = feature_row(domain)
        values += [market, depth]
        retail = 1.0 if venue_class is VenueClass.RETAIL else 0.0
        values += [retail, retail * float(len(label) <= 4)]
        names = {**names, "tld_market": market}
        values += [retail * names.get(source, 0.0) for source in RETAIL_SOURCES.values()]
        return values

    def retail_design(self, wholesale: Matrix) -> Matrix:
        """The retail rows of names whose wholesale rows are `wholesale` (the retail terms are
        the only columns that differ), without computing the features again."""
        retail = wholesale.copy()
        column = {name: position for position, name in enumerate(ALL_FEATURES)}
        retail[:, column["retail"]] = 1.0
        retail[:, column["retail_x_short"]] = (wholesale[:, column["length"]] <= 4).astype(float)
        for name, source in RETAIL_SOURCES.items():
            retail[:, column[name]] = wholesale[:, column[source]]
        return retail

    def base_log(self, matrix: Matrix) -> Matrix:
        """The regression's log price of each row (its venue class is in the row), with the
        retail stretch for the retail rows."""
        result: Matrix = self.intercept + (matrix - self._centres) @ self._weights
        if self.retail_stretch:
            wholesale = self.wholesale_log(matrix)
            result = result + self.retail_stretch * matrix[:, self._retail_column] * (
                wholesale - self.stretch_pivot
            )
        return result

    def wholesale_log(self, matrix: Matrix) -> Matrix:
        """The regression's log price of each row as if it were wholesale (retail terms 0)."""
        centred = (matrix - self._centres) * self._not_retail
        result: Matrix = self.intercept + centred @ self._weights
        return result

    # -- comparables --------------------------------------------------------------------

    def prepare(self, index: ComparablesIndex) -> None:
        """Compute, once per index and model, how far each sale sold from this model's base
        appraisal of it (the residuals the comparables term reads)."""
        key = f"{self.name}/{self.version}/{id(self)}"
        if index.residuals_of == key:
            return
        residuals: list[float] = []
        for start in range(0, len(index.sales), 4096):
            chunk = index.sales[start : start + 4096]
            matrix = self.design([s.domain for s in chunk], [s.venue_class for s in chunk])
            base = self.base_log(matrix)
            residuals += [
                index.log_price(start + offset) - float(base[offset])
                for offset in range(len(chunk))
            ]
        index.residuals = residuals
        index.residuals_of = key

    def comparables_signal(
        self, found: Sequence[tuple[int, float, float]], index: ComparablesIndex
    ) -> float:
        """Σ w r ÷ (Σ w + k0) over the found comparables (0 without any)."""
        if not found or index.residuals is None:
            return 0.0
        residuals = index.residuals
        total = sum(weight for _, _, weight in found)
        weighted = sum(weight * residuals[position] for position, _, weight in found)
        return weighted / (total + self.comparables_term.pseudo_weight)

    # -- appraisals ---------------------------------------------------------------------

    def appraise(
        self, domain: str, comparables: ComparablesIndex | None = None, today: date | None = None
    ) -> Appraisal:
        """The values of `domain` (comparables: past sales to use as evidence; today: the day
        of the appraisal, which decides which sales are past and how recent)."""
        return self.appraise_many([domain], comparables, today)[0]

    def appraise_many(
        self,
        domains: Sequence[str],
        comparables: ComparablesIndex | None = None,
        today: date | None = None,
    ) -> list[Appraisal]:
        """`appraise` for many names at once (one matrix product for all of them)."""
        today = today or date.today()
        names = [domain.strip().lower().rstrip(".") for domain in domains]
        if not names:
            return []
        wholesale_x = self.design(names, [VenueClass.WHOLESALE] * len(names))
        retail_x = self.retail_design(wholesale_x)
        wholesale = self.base_log(wholesale_x)
        retail = self.base_log(retail_x)
        adjustments = np.zeros(len(names))
        used: list[list[UsedComparable]] = [[] for _ in names]
        # The comparables are reported as evidence even where the fit gave them no weight
        if comparables is not None and len(comparables):
            self.prepare(comparables)
            for row, name in enumerate(names):
                found = comparables.nearest(name, today, k=self.comparables_term.k)
                signal = self.comparables_signal(found, comparables)
                adjustments[row] = self.comparables_term.beta * signal
                used[row] = comparables.used(name, found)
        wholesale = wholesale + adjustments
        retail = retail + adjustments
        wholesale_range = self._ranges(VenueClass.WHOLESALE, wholesale)
        retail_range = self._ranges(VenueClass.RETAIL, retail)
        parts = self._parts(retail_x)
        info = self.info
        return [
            Appraisal(
                domain=name,
                wholesale=wholesale_range[row],
                retail=retail_range[row],
                contributions=self._contributions(
                    name, parts[row], float(adjustments[row]), used[row], retail_range[row].p50
                ),
                comparables=used[row],
                model=info,
            )
            for row, name in enumerate(names)
        ]

    def predict_log(
        self,
        domains: Sequence[str],
        classes: Sequence[VenueClass],
        comparables: ComparablesIndex | None = None,
        today: date | None = None,
        exclude: Sequence[int | None] | None = None,
        todays: Sequence[date] | None = None,
    ) -> Matrix:
        """The P50 log price of each (domain, class): the fast path for fitting and evaluation
        (no explanation). `todays` gives each row its own day (a backtest); `exclude` leaves a
        sale of the index out of its own comparables."""
        predicted = self.base_log(self.design(domains, classes))
        if comparables is not None and len(comparables) and self.comparables_term.beta:
            self.prepare(comparables)
            for row, domain in enumerate(domains):
                day = todays[row] if todays is not None else (today or date.today())
                left_out = exclude[row] if exclude is not None else None
                found = comparables.nearest(
                    domain, day, exclude=left_out, k=self.comparables_term.k
                )
                predicted[row] += self.comparables_term.beta * self.comparables_signal(
                    found, comparables
                )
        return predicted

    def ranges(self, venue_class: VenueClass, predicted_log: Matrix) -> list[Range]:
        return self._ranges(venue_class, predicted_log)

    def _ranges(self, venue_class: VenueClass, predicted: Matrix) -> list[Range]:
        low, mid, high = self.intervals.bounds(venue_class.value, predicted)
        return [
            Range(math.exp(p + lo), math.exp(p + mi), math.exp(p + hi))
            for p, lo, mi, hi in zip(
                predicted.tolist(), low.tolist(), mid.tolist(), high.tolist(), strict=True
            )
        ]

    def _parts(self, retail_x: Matrix) -> Matrix:
        """Each group's share of the retail log value, the stretch spread over the groups it
        multiplies (its constant part is the venue's)."""
        terms = (retail_x - self._centres) * self._weights
        if self.retail_stretch:
            terms = terms + self.retail_stretch * terms * self._not_retail
            venue = self._groups.index("venue")
            constant = self.retail_stretch * (self.intercept - self.stretch_pivot)
            parts: Matrix = terms @ self._group_matrix
            parts[:, venue] += constant
            return parts
        result: Matrix = terms @ self._group_matrix
        return result

    def _contributions(
        self,
        domain: str,
        parts: Matrix,
        adjustment: float,
        used: list[UsedComparable],
        p50: float,
    ) -> list[Contribution]:
        effects = dict(zip(self._groups, parts.tolist(), strict=True))
        if used:
            effects["comparables"] = adjustment
        ranked = sorted(effects.items(), key=lambda item: -abs(item[1]))[:TOP_CONTRIBUTIONS]
        return [
            Contribution(
                label=self._describe(group, domain, used),
                dollars=p50 * (1.0 - math.exp(-effect)),
                factor=math.exp(effect),
            )
            for group, effect in ranked
            if abs(effect) > 1e-9
        ]

    def _describe(self, group: str, domain: str, used: list[UsedComparable]) -> str:
        from dominus.valuation.explain import describe  # noqa: PLC0415 - a leaf, kept apart

        return describe(group, domain, self.market, used)

    # -- the file -----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": MODEL_FORMAT,
            "name": self.name,
            "version": self.version,
            "trained_on": self.trained_on,
            "features": list(ALL_FEATURES),
            "intercept": self.intercept,
            "weights": {name: round(self.weights.get(name, 0.0), 8) for name in ALL_FEATURES},
            "centres": {name: round(self.centres.get(name, 0.0), 8) for name in ALL_FEATURES},
            "tld_market": self.market.to_dict(),
            "intervals": self.intervals.to_dict(),
            "comparables": self.comparables_term.to_dict(),
            "retail_stretch": {"gamma": self.retail_stretch, "pivot": self.stretch_pivot},
            "metrics": self.metrics,
            "baselines": self.baselines,
            "candidates": self.candidates,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ValueModel:
        if data.get("format") != MODEL_FORMAT:
            raise ModelFileError(f"model format {data.get('format')!r} is not {MODEL_FORMAT}")
        unknown = set(data["weights"]) - set(ALL_FEATURES)
        if unknown:
            raise ModelFileError(f"the model has features this version lacks: {sorted(unknown)}")
        term = data["comparables"]
        return cls(
            name=str(data["name"]),
            version=str(data["version"]),
            intercept=float(data["intercept"]),
            weights={key: float(value) for key, value in data["weights"].items()},
            centres={key: float(value) for key, value in data["centres"].items()},
            market=TldMarket.from_dict(data["tld_market"]),
            intervals=Intervals.from_dict(data["intervals"]),
            comparables_term=ComparablesTerm(
                beta=float(term["beta"]),
                pseudo_weight=float(term["pseudo_weight"]),
                half_life_years=float(term["half_life_years"]),
                k=int(term["k"]),
            ),
            trained_on=dict(data.get("trained_on", {})),
            metrics=dict(data.get("metrics", {})),
            baselines=dict(data.get("baselines", {})),
            candidates=dict(data.get("candidates", {})),
            retail_stretch=float(data.get("retail_stretch", {}).get("gamma", 0.0)),
            stretch_pivot=float(data.get("retail_stretch", {}).get("pivot", 0.0)),
        )

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_dict(), indent=1, ensure_ascii=False) + "\n")


def read_model(path: Path) -> ValueModel:
    try:
        data = json.loads(path.read_text(encoding="utf-8"), parse_constant=_not_a_number)
    except FileNotFoundError:
        raise ModelFileError(f"{path}: no such model file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ModelFileError(f"{path}: cannot be read ({error})") from None
    except json.JSONDecodeError as error:
        raise ModelFileError(f"{path}: not a JSON model file (line {error.lineno})") from None
    except ValueError as error:  # NaN or Infinity: every value it gave would be one
        raise ModelFileError(f"{path}: not a value model file ({error})") from None
    if not isinstance(data, dict):
        raise ModelFileError(f"{path}: not a value model file (a JSON object is expected)")
    if not _all_finite(data):  # 1e400 reads as infinity
        raise ModelFileError(f"{path}: not a value model file (a number is out of range)")
    try:
        return ValueModel.from_dict(data)
    except KeyError as error:
        raise ModelFileError(f"{path}: not a value model file (no {error.args[0]!r})") from None
    except (TypeError, ValueError, AttributeError):
        raise ModelFileError(
            f"{path}: not a value model file (a field is not of the model's shape)"
        ) from None


def _all_finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_all_finite(item) for item in value.values())
    if isinstance(value, list):
        return all(_all_finite(item) for item in value)
    return True


def _not_a_number(constant: str) -> float:
    raise ValueError(f"{constant} is not a number a model may hold")


_LOADED: dict[Path, ValueModel] = {}


def load_model(path: Path | None = None) -> ValueModel:
    """The model at `path`; without one, the file VALUATION_MODEL_PATH names, else the bundled
    model. Loaded once per path per process."""
    if path is None:
        configured = os.environ.get(MODEL_PATH_VARIABLE, "").strip()
        path = Path(configured) if configured else BUNDLED_MODEL_PATH
    resolved = path.resolve()
    if resolved not in _LOADED:
        _LOADED[resolved] = read_model(path)
    return _LOADED[resolved]
