"""GET /api/v1/metrics: the queue in Prometheus text format, read from the database, so any API
process reports the same figures for the whole installation.

Gauges: jobs by status and type, active jobs and the pause state of each named queue, dead-letter
entries, queue latency (the oldest due job's wait), oldest pending age, live workers.
Counters (from `job_metrics`, which only grows): jobs enqueued, completed, failed attempts,
reclaims, dead-lettered, cancelled; the job duration histogram, and the pickup histogram (how long
after it became due each attempt started).

One gauge is this process's own, not the installation's: the event streams it has open.

Every known job type (each registered one, and any the tables name) has its series from the
start, at 0 when nothing happened: a series that appears only at its first event cannot be told
apart from a scrape that failed, and `rate()` or an alert on it has nothing to compare with.
`dominus_jobs` has every status of every known type."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from dominus.api.services import ApiServices
from dominus.jobs.metrics_model import (
    CANCELLED,
    COMPLETED,
    DEAD_LETTERED,
    ENQUEUED,
    FAILED,
    INFINITY,
    RECLAIMED,
    MetricTotals,
)
from dominus.jobs.model import JobStatus, QueueState, QueueStats
from dominus.jobs.sql.metrics import BUCKET_LABELS, PICKUP_LABELS

# An empty duration (pickup) histogram: every bucket at 0.
NO_DURATIONS = tuple((label, 0.0) for label in (*BUCKET_LABELS, INFINITY))
NO_PICKUPS = tuple((label, 0.0) for label in (*PICKUP_LABELS, INFINITY))

COUNTERS = (
    (ENQUEUED, "dominus_jobs_enqueued", "Jobs enqueued."),
    (COMPLETED, "dominus_jobs_completed", "Jobs completed."),
    (FAILED, "dominus_job_attempts_failed", "Attempts that raised or timed out."),
    (RECLAIMED, "dominus_job_attempts_reclaimed", "Attempts reclaimed from silent workers."),
    (DEAD_LETTERED, "dominus_jobs_dead_lettered", "Jobs moved to the dead-letter queue."),
    (CANCELLED, "dominus_jobs_cancelled", "Jobs cancelled (by a user or at shutdown)."),
)


class QueueCollector(Collector):
    def __init__(self, api: ApiServices) -> None:
        self._api = api

    def collect(self) -> Iterator[Metric]:
        api = self._api
        stats = api.store.queue_stats(api.now(), alive_since=api.alive_since())
        totals = api.store.metric_totals()
        jobs = GaugeMetricFamily(
            "dominus_jobs", "Jobs in the queue table by status and type.", labels=["status", "type"]
        )
        job_types = _known_types(api, stats, totals)
        for job_type in job_types:
            counts = stats.by_type.get(job_type, {})
            for status in JobStatus:
                jobs.add_metric([status.value, job_type], counts.get(status.value, 0))
        yield jobs
        yield from _queue_gauges(stats.queues)
        yield GaugeMetricFamily(
            "dominus_dead_letter_entries", "Dead-letter entries not requeued.", stats.dead_letter
        )
        yield GaugeMetricFamily(
            "dominus_queue_latency_seconds",
            "How long the longest-waiting due pending job has waited since its run_at (0 when "
            "none is due): alert on this one.",
            stats.latency_seconds or 0.0,
        )
        yield GaugeMetricFamily(
            "dominus_oldest_pending_job_age_seconds",
            "Age since creation of the oldest pending job, scheduled and backing-off ones "
            "included (0 when none); see dominus_queue_latency_seconds.",
            stats.oldest_pending_age_seconds or 0.0,
        )
        yield GaugeMetricFamily(
            "dominus_workers_alive", "Workers with a recent heartbeat.", stats.workers_alive
        )
        for name, metric, documentation in COUNTERS:
            counter = CounterMetricFamily(metric, documentation, labels=["type"])
            for job_type in job_types:
                counter.add_metric([job_type], totals.counter(name, job_type))
            yield counter
        yield _histogram(
            "dominus_job_duration_seconds",
            "Run time of completed attempts.",
            job_types,
            (totals.histograms, totals.durations, NO_DURATIONS),
        )
        yield _histogram(
            "dominus_job_pickup_seconds",
            "From when an attempt became due (its run_at, or its creation if later) to its "
            "start, for attempts that completed or failed.",
            job_types,
            (totals.pickup_histograms, totals.pickups, NO_PICKUPS),
        )


Observed = tuple[
    Mapping[str, Sequence[tuple[str, float]]],  # job_type → cumulative (le, count)
    Mapping[str, tuple[float, float]],  # job_type → (sum, count)
    Sequence[tuple[str, float]],  # the empty histogram
]


def _histogram(name: str, documentation: str, job_types: list[str], observed: Observed) -> Metric:
    """A histogram with a series for every known type, at 0 where nothing was observed."""
    buckets_by_type, sums_by_type, empty = observed
    histogram = HistogramMetricFamily(name, documentation, labels=["type"])
    for job_type in job_types:
        buckets = buckets_by_type.get(job_type, empty)
        total_seconds, _count = sums_by_type.get(job_type, (0.0, 0.0))
        histogram.add_metric([job_type], list(buckets), total_seconds)
    return histogram


def _known_types(api: ApiServices, stats: QueueStats, totals: MetricTotals) -> list[str]:
    """Every registered job type, and any other the job table or the counters name (a type
    registered before, or by another process's registry)."""
    known = set(api.queue.registry.names()) | set(stats.by_type) | set(totals.histograms)
    known |= set(totals.pickup_histograms)
    known |= {job_type for _name, job_type in totals.counters}
    return sorted(known)


def _queue_gauges(states: Sequence[QueueState]) -> Iterator[Metric]:
    """Per named queue: its pending and running jobs, and whether it is paused. Gauges of their
    own, so that `dominus_jobs` keeps the labels it always had."""
    jobs = GaugeMetricFamily(
        "dominus_queue_jobs", "Active jobs by named queue and status.", labels=["queue", "status"]
    )
    paused = GaugeMetricFamily(
        "dominus_queue_paused", "1 while the named queue is paused.", labels=["queue"]
    )
    for state in states:
        jobs.add_metric([state.name, "pending"], state.pending)
        jobs.add_metric([state.name, "running"], state.running)
        paused.add_metric([state.name], 1 if state.paused else 0)
    yield jobs
    yield paused


class ProcessCollector(Collector):
    def __init__(self, api: ApiServices) -> None:
        self._api = api

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "dominus_api_open_streams",
            "Server-Sent Event streams open in this API process (at most DOMINUS_MAX_STREAMS).",
            self._api.streams.open_streams,
        )


def render(api: ApiServices) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(QueueCollector(api))
    registry.register(ProcessCollector(api))
    return generate_latest(registry)
