"""The backtest plot: predicted against realised prices, both on log scales, one point per sale
coloured by confidence bucket, the line of perfect prediction, and the conservative region
(predicted ≤ realised, below the line) shaded. Rendered with matplotlib's Agg backend through its
object API (no pyplot state), so any thread may draw one."""

from __future__ import annotations

import io
from collections.abc import Sequence

from dominus.backtest.samples import BUCKETS, Sample

COLOURS = {"low": "#d62728", "mid": "#ff7f0e", "high": "#2ca02c"}
FLOOR = 1.0  # log scales need positive values


def render_png(samples: Sequence[Sample], currency: str, title: str = "") -> bytes:
    # matplotlib is imported here, not at the top: it costs about a second, and every CLI
    # command would pay it.
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415
    from matplotlib.figure import Figure  # noqa: PLC0415

    figure = Figure(figsize=(7, 6), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    values = [max(s.realised, FLOOR) for s in samples] + [max(s.predicted, FLOOR) for s in samples]
    low = min(values, default=10.0) / 2
    high = max(values, default=10_000.0) * 2
    axes.fill_between(
        [low, high],
        [low, low],
        [low, high],
        color="#2ca02c",
        alpha=0.08,
        label="conservative: predicted ≤ realised",
    )
    axes.plot([low, high], [low, high], color="#444444", linewidth=1, label="predicted = realised")
    for bucket in BUCKETS:
        members = [s for s in samples if s.bucket == bucket]
        if members:
            axes.scatter(
                [max(s.realised, FLOOR) for s in members],
                [max(s.predicted, FLOOR) for s in members],
                s=14,
                color=COLOURS[bucket],
                label=f"{bucket} confidence ({len(members)})",
                alpha=0.8,
            )
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlim(low, high)
    axes.set_ylim(low, high)
    axes.set_xlabel(f"realised sale price ({currency}, log)")
    axes.set_ylabel(f"predicted expected value ({currency}, log)")
    axes.set_title(title or f"Backtest: {len(samples)} sales")
    axes.legend(loc="upper left", fontsize=8)
    axes.grid(True, which="major", alpha=0.3)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()
