"""How much the name alone can say about one month of marketplace sales: other learners, same rows.

    pip install scikit-learn lightgbm   # into a scratch environment: not project dependencies
    PYTHONPATH=src python bench/valuation_floor.py [--shared DIR]

A study, not part of the product. It reads only the NameBio rows that bench/valuation_fit.py
keeps for training (its latest 20 % by date stay unread, as everywhere), deals them into 5 seeded
folds, and fits learners of other families on the same name features as the bundled model
(`feature_row`, plus the venue class): a ridge (the bundled model's family), gradient-boosted
trees (LightGBM, squared and absolute loss), the ridge with character n-grams of the label, and
the ridge with a target encoding of the label's words (each word's shrunk mean residual, computed
out of fold). Printed per learner: Spearman over every sale and over the wholesale sales alone,
median |log10 error|, the share within a factor of 2, R² on log prices.

The question it answers is whether another learner or richer text features would carry the
marketplace month to the issue's targets (Spearman 0.35, 55 % within 2×, R² 0.20); the figures
are in ADR 0040 (version 3).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from dominus.valuation.features import feature_row  # noqa: E402
from dominus.valuation.tlds import split_domain  # noqa: E402
from dominus.valuation.venues import VenueClass  # noqa: E402
from dominus.valuation.words import label_words  # noqa: E402
from valuation_fit import held_out_split, shared_data  # noqa: E402

SEED = 11
FOLDS = 5
Learner = Callable[[np.ndarray, np.ndarray], np.ndarray]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=shared_data())
    args = parser.parse_args()
    from lightgbm import LGBMRegressor  # noqa: PLC0415
    from scipy import sparse  # noqa: PLC0415
    from sklearn.feature_extraction.text import CountVectorizer  # noqa: PLC0415
    from sklearn.linear_model import Ridge  # noqa: PLC0415
    from sklearn.preprocessing import StandardScaler  # noqa: PLC0415

    (kept, _held_out), _public = held_out_split(args.shared)
    prices = np.array([math.log10(sale.price) for sale in kept])
    retail = np.array([float(sale.venue_class is VenueClass.RETAIL) for sale in kept])
    features = np.column_stack([np.array([feature_row(sale.domain) for sale in kept]), retail])
    labels = [split_domain(sale.domain)[0] for sale in kept]
    words = [label_words(label).words for label in labels]
    fold = np.random.default_rng(SEED).permutation(len(kept)) % FOLDS

    def ridge_on(matrix: np.ndarray, alpha: float = 100.0) -> Learner:
        def learn(train: np.ndarray, test: np.ndarray) -> np.ndarray:
            scaler = StandardScaler().fit(matrix[train])
            model = Ridge(alpha=alpha).fit(scaler.transform(matrix[train]), prices[train])
            return np.asarray(model.predict(scaler.transform(matrix[test])))

        return learn

    def trees(**options: object) -> Learner:
        def learn(train: np.ndarray, test: np.ndarray) -> np.ndarray:
            model = LGBMRegressor(
                verbose=-1,
                n_estimators=300,
                learning_rate=0.03,
                num_leaves=15,
                min_child_samples=30,
                subsample=0.8,
                subsample_freq=1,
                colsample_bytree=0.8,
                **options,
            )
            return np.asarray(model.fit(features[train], prices[train]).predict(features[test]))

        return learn

    grams = CountVectorizer(analyzer="char_wb", ngram_range=(2, 4), min_df=5, binary=True)
    scaled = sparse.csr_matrix(StandardScaler().fit_transform(features))
    with_grams = sparse.hstack([scaled, grams.fit_transform(labels)]).tocsr()

    def ridge_with_grams(train: np.ndarray, test: np.ndarray) -> np.ndarray:
        model = Ridge(alpha=300.0).fit(with_grams[train], prices[train])
        return np.asarray(model.predict(with_grams[test]))

    def word_encoding(rows: np.ndarray, residuals: np.ndarray) -> dict[str, float]:
        sums: dict[str, float] = defaultdict(float)
        counts: dict[str, int] = defaultdict(int)
        for row, residual in zip(rows, residuals, strict=True):
            for word in {word for word in words[row] if len(word) >= 3}:
                sums[word] += float(residual)
                counts[word] += 1
        return {word: sums[word] / (counts[word] + 10) for word in sums}

    def encoded(rows: np.ndarray, table: dict[str, float]) -> np.ndarray:
        values = []
        for row in rows:
            found = [table.get(word, 0.0) for word in {w for w in words[row] if len(w) >= 3}]
            values.append([sum(found), max(found, default=0.0), min(found, default=0.0)])
        return np.array(values)

    def ridge_residuals(rows: np.ndarray) -> np.ndarray:
        return prices[rows] - ridge_on(features)(rows, rows)

    def ridge_with_word_values(train: np.ndarray, test: np.ndarray) -> np.ndarray:
        inner = np.random.default_rng(5).permutation(len(train)) % FOLDS
        train_values = np.zeros((len(train), 3))
        for part in range(FOLDS):
            fitted_on, applied_to = train[inner != part], train[inner == part]
            table = word_encoding(fitted_on, ridge_residuals(fitted_on))
            train_values[inner == part] = encoded(applied_to, table)
        table = word_encoding(train, ridge_residuals(train))
        train_matrix = np.column_stack([features[train], train_values])
        test_matrix = np.column_stack([features[test], encoded(test, table)])
        scaler = StandardScaler().fit(train_matrix)
        model = Ridge(alpha=100.0).fit(scaler.transform(train_matrix), prices[train])
        return np.asarray(model.predict(scaler.transform(test_matrix)))

    learners: dict[str, Learner] = {
        "ridge (the bundled model's family), no public sales": ridge_on(features),
        "gradient-boosted trees, squared loss": trees(),
        "gradient-boosted trees, absolute loss": trees(objective="l1"),
        "ridge + character 2-4-grams of the label": ridge_with_grams,
        "ridge + the words' out-of-fold values": ridge_with_word_values,
    }
    print(f"{len(kept)} NameBio training rows, {FOLDS} folds (seed {SEED})")
    for name, learn in learners.items():
        predicted = np.zeros(len(prices))
        for part in range(FOLDS):
            train, test = np.where(fold != part)[0], np.where(fold == part)[0]
            predicted[test] = learn(train, test)
        show(name, predicted, prices, retail == 0)


def show(name: str, predicted: np.ndarray, prices: np.ndarray, wholesale: np.ndarray) -> None:
    from scipy.stats import spearmanr  # noqa: PLC0415

    error = np.abs(predicted - prices)
    r2 = 1 - float(((predicted - prices) ** 2).sum() / ((prices - prices.mean()) ** 2).sum())
    print(
        f"{name:55s} spearman {spearmanr(predicted, prices).statistic:.3f}"
        f"  wholesale {spearmanr(predicted[wholesale], prices[wholesale]).statistic:.3f}"
        f"  median err {np.median(error):.3f}  within 2x {(error <= math.log10(2)).mean():.1%}"
        f"  R2 {r2:.3f}"
    )


if __name__ == "__main__":
    main()
