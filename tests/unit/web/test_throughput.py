"""The last hour's throughput from readings of the job_metrics counters, its chart, and the
HTML events of the live parts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dominus.jobs.metrics_model import MetricTotals
from dominus.web.charts import PLOT_HEIGHT, throughput_chart
from dominus.web.live import html_event
from dominus.web.throughput import Reading, ThroughputWindow, reading

T0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_a_reading_sums_the_counters_over_job_types() -> None:
    totals = MetricTotals(
        counters={
            ("completed", "a"): 5.0,
            ("completed", "b"): 7.0,
            ("failed", "a"): 2.0,
            ("enqueued", "a"): 40.0,
        },
        histograms={},
        durations={},
    )
    assert reading(T0, totals) == Reading(T0, 12.0, 2.0)


def test_bars_are_the_differences_between_readings() -> None:
    window = ThroughputWindow()
    window.add(Reading(at(0), 100, 10))
    window.add(Reading(at(1), 130, 10))
    window.add(Reading(at(2), 150, 13))
    throughput = window.throughput(Reading(at(2.5), 155, 14))
    assert [(bar.completed, bar.failed) for bar in throughput.bars] == [(30, 0), (20, 3), (5, 1)]
    assert throughput.completed == 55
    assert throughput.failed == 4
    assert throughput.failure_rate == 4 / 59
    assert throughput.since == at(0)


def test_only_the_last_hour_is_kept() -> None:
    window = ThroughputWindow()
    for minute in range(0, 91):
        window.add(Reading(at(minute), minute * 10, 0))
    throughput = window.throughput(Reading(at(90), 900, 0))
    assert throughput.since is not None and throughput.since >= at(90) - timedelta(minutes=61)
    assert throughput.completed == 600  # 60 minutes of 10 a minute
    assert len(throughput.bars) == 60


def test_no_reading_yet_and_nothing_finished() -> None:
    empty = ThroughputWindow().throughput(None)
    assert empty.bars == [] and empty.since is None and empty.failure_rate is None
    one = ThroughputWindow()
    one.add(Reading(at(0), 3, 0))
    assert one.throughput(Reading(at(0.5), 3, 0)).failure_rate is None


def test_a_counter_that_falls_draws_no_negative_bar() -> None:
    """Another database behind the same server (restored from a backup): never below zero."""
    window = ThroughputWindow()
    window.add(Reading(at(0), 100, 5))
    throughput = window.throughput(Reading(at(1), 20, 1))
    assert [(bar.completed, bar.failed) for bar in throughput.bars] == [(0, 0)]


def test_the_chart_scales_bars_to_the_largest() -> None:
    window = ThroughputWindow()
    window.add(Reading(at(0), 0, 0))
    window.add(Reading(at(1), 40, 10))
    chart = throughput_chart(window.throughput(Reading(at(2), 60, 10)))
    assert chart.top_value == 40
    first, second = chart.bars
    assert first.completed_height == PLOT_HEIGHT
    assert first.failed_height == PLOT_HEIGHT / 4
    assert second.completed_height == PLOT_HEIGHT / 2
    assert first.label == "12:00–12:01 UTC: 40 completed, 10 failed"
    assert second.x > first.x
    assert throughput_chart(ThroughputWindow().throughput(None)).bars == []


def test_html_events_put_each_line_in_its_own_data_field() -> None:
    event = html_event("job", {"html": "<p>a</p>\n<p>b</p>", "status": "running"})
    assert event == "event: job\ndata: <p>a</p>\ndata: <p>b</p>\n\n"
    assert html_event("end", {"id": 3, "status": "completed"}) == "event: end\ndata: completed\n\n"
