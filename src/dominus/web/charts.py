"""The overview's throughput chart as numbers for an inline SVG (drawn by the template, so it
shows without JavaScript): one bar pair per interval, jobs completed and attempts failed."""

from __future__ import annotations

from dataclasses import dataclass

from dominus.web.throughput import Throughput

WIDTH = 600
HEIGHT = 160
LEFT = 40  # room for the scale
BOTTOM = 20  # room for the time labels
PLOT_HEIGHT = HEIGHT - BOTTOM - 10


@dataclass(frozen=True)
class ChartBar:
    x: float
    width: float
    completed_height: float
    failed_height: float
    label: str  # for the bar's <title>: "12:04–12:05 UTC: 30 completed, 2 failed"


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    left: int
    base: float  # y of the time axis
    top_value: int  # the scale's top
    bars: list[ChartBar]
    first_label: str
    last_label: str


def throughput_chart(throughput: Throughput, time_format: str = "%H:%M") -> Chart:
    """`time_format` writes the bars' times (`%H:%M` for minutes and hours, `%m-%d` for days)."""
    bars = throughput.bars
    top = max([1, *(max(bar.completed, bar.failed) for bar in bars)])
    base = float(HEIGHT - BOTTOM)
    slot = (WIDTH - LEFT) / max(len(bars), 1)
    drawn = []
    for index, bar in enumerate(bars):
        x = LEFT + index * slot
        span = f"{bar.start:{time_format}}–{bar.end:{time_format}} UTC"
        drawn.append(
            ChartBar(
                x=round(x, 2),
                width=round(max(slot / 2 - 1, 1), 2),
                completed_height=round(PLOT_HEIGHT * bar.completed / top, 2),
                failed_height=round(PLOT_HEIGHT * bar.failed / top, 2),
                label=f"{span}: {bar.completed} completed, {bar.failed} failed",
            )
        )
    first = f"{bars[0].start:{time_format}}" if bars else ""
    last = f"{bars[-1].end:{time_format}} UTC" if bars else ""
    return Chart(WIDTH, HEIGHT, LEFT, base, top, drawn, first, last)
