"""The tables, as SQLAlchemy Core objects. Alembic migrations create them; this module describes
what the code expects to find (the newest migration and these definitions must agree, which
`tests/integration/test_migrations.py` checks).

The job engine's tables live with the engine (`dominus.jobs.sql.tables`, on the same metadata);
they are re-exported here for the domain modules and the migrations. This module adds the
domain's."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Date,
    Float,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)

from dominus.db.types import UTCDateTime
from dominus.jobs.sql.tables import (
    MAX_ID,
    NAMING_CONVENTION,
    Document,
    Identifier,
    dead_letter_jobs,
    job_events,
    job_metrics,
    job_queue,
    job_queues,
    metadata,
    rate_limit_grants,
    rate_limits,
    schedule_fires,
    schedulers,
    schedules,
    workers,
)

# The engine's names that the domain modules and the migrations import from here.
__all__ = [
    "MAX_ID",
    "NAMING_CONVENTION",
    "Document",
    "Identifier",
    "dead_letter_jobs",
    "job_events",
    "job_metrics",
    "job_queue",
    "job_queues",
    "metadata",
    "rate_limit_grants",
    "rate_limits",
    "schedule_fires",
    "schedulers",
    "schedules",
    "workers",
]

# --- the domain pipeline (migration 0004) ------------------------------------------------------
# Runs reference their job by id without a foreign key: finished jobs are pruned, runs are kept.

weight_sets = Table(
    "weight_sets",
    metadata,
    Column("id", Identifier, primary_key=True, autoincrement=True),
    Column("name", String(100), nullable=False),
    Column("weights", Document, nullable=False),
    # Where the set came from: "manual", "tuned" (the weight-tuning job), "default".
    Column("source", String(32), nullable=False),
    Column("notes", Text),
    Column("created_at", UTCDateTime, nullable=False),
    # The active set is the one activated last; NULL: never activated.
    Column("activated_at", UTCDateTime),
)
Index("ix_weight_sets_activated_at", weight_sets.c.activated_at)

pipeline_runs = Table(
    "pipeline_runs",
    metadata,
    Column("id", Identifier, primary_key=True, autoincrement=True),
    Column("job_id", BigInteger),
    Column("status", String(16), nullable=False),
    Column("input", Document, nullable=False),
    Column("providers", String(32), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("started_at", UTCDateTime),
    Column("finished_at", UTCDateTime),
    Column("stages", Document, nullable=False),
    Column("summary", Document),
    Column("degraded", Boolean, nullable=False, server_default=text("false")),
    Column("degraded_reasons", Document, nullable=False),
    Column("error", Text),
    Column("weight_set_id", BigInteger),
    Column("weights", Document),
    CheckConstraint(
        "status IN ('pending', 'running', 'completed', 'failed', 'cancelled')", name="status"
    ),
)
Index("ix_pipeline_runs_job_id", pipeline_runs.c.job_id)

# What each finished stage handed to the next, so a retried run resumes where it stopped.
pipeline_checkpoints = Table(
    "pipeline_checkpoints",
    metadata,
    Column(
        "run_id",
        Identifier,
        ForeignKey("pipeline_runs.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("stage", String(32), primary_key=True),
    Column("data", Document, nullable=False),
    Column("saved_at", UTCDateTime, nullable=False),
)

candidates = Table(
    "candidates",
    metadata,
    Column("id", Identifier, primary_key=True, autoincrement=True),
    Column("domain", String(253), nullable=False, unique=True),
    Column("unicode_domain", String(253), nullable=False),
    Column("source", String(16), nullable=False),
    Column("availability", String(16)),
    Column("availability_detail", Text),
    Column("registered_at", Date),
    Column("expires_at", Date),
    Column("first_seen_at", UTCDateTime, nullable=False),
    Column("last_seen_at", UTCDateTime, nullable=False),
    Column("last_run_id", BigInteger),
)

scoring_runs = Table(
    "scoring_runs",
    metadata,
    Column("id", Identifier, primary_key=True, autoincrement=True),
    Column(
        "run_id", Identifier, ForeignKey("pipeline_runs.id", ondelete="CASCADE"), nullable=False
    ),
    Column("domain", String(253), nullable=False),
    Column("intrinsic", Float, nullable=False),
    Column("commercial", Float),
    Column("market", Float),
    Column("expiry", Float),
    Column("weighted_score", Float, nullable=False),
    Column("confidence", Float, nullable=False),
    Column("expected_value", Float, nullable=False),
    Column("suggested_buy_max", Float, nullable=False),
    Column("suggested_list_price", Float, nullable=False),
    Column("recommended", Boolean, nullable=False),
    Column("trademark_verdict", String(16), nullable=False),
    Column("trademark_mark", String(200)),
    Column("details", Document, nullable=False),
    Column("scored_at", UTCDateTime, nullable=False),
    UniqueConstraint("run_id", "domain"),
)
Index("ix_scoring_runs_domain", scoring_runs.c.domain)

# --- the portfolio (migration 0006) ------------------------------------------------------------
# Money is stored in the scoring currency (SCORING_CURRENCY), as floats rounded to cents like the
# scoring tables; `currency` records which one, so a later change of setting is visible (ADR 0021).

PORTFOLIO_STATUSES = ("active", "sold", "dropped")
VERDICTS = ("keep", "drop", "reprice")
OUTCOME_TYPES = ("sold", "dropped", "expired")

portfolio_entries = Table(
    "portfolio_entries",
    metadata,
    Column("id", Identifier, primary_key=True, autoincrement=True),
    Column("domain", String(253), nullable=False, unique=True),
    Column("tld", String(63), nullable=False),
    Column("acquired_at", Date),
    Column("renewal_date", Date, nullable=False),
    # NULL: not known (an import without the column); a blank cell never overwrites a value.
    Column("acquisition_cost", Float),
    Column("renewal_cost", Float),
    Column("currency", String(3), nullable=False),
    Column("registrar", String(200)),
    # Set by PORTFOLIO_RESCORE; NULL until the entry was scored once.
    Column("current_score", Float),
    Column("expected_value", Float),
    Column("confidence", Float),
    Column("suggested_list_price", Float),
    # The price the name is listed at (a marketplace's asking price); NULL: not listed.
    Column("list_price", Float),
    Column("score_details", Document),
    Column("verdict", String(16)),
    Column("verdict_reason", Text),
    Column("verdict_at", UTCDateTime),
    Column("scored_at", UTCDateTime),
    Column("notes", Text),
    Column("status", String(16), nullable=False, server_default=text("'active'")),
    # Money paid in renewals so far (not a count): the ledger's cost basis beside acquisition.
    Column("renewals_paid", Float, nullable=False, server_default=text("0")),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    # What the registrar's export says; NULL: not known (a blank cell never overwrites).
    Column("auto_renew", Boolean),
    # The registrar's word for the name (e.g. `Expired`), never a registry EPP status.
    Column("registrar_status", String(100)),
    CheckConstraint("status IN ('active', 'sold', 'dropped')", name="status"),
    CheckConstraint("verdict IN ('keep', 'drop', 'reprice')", name="verdict"),
    CheckConstraint("current_score >= 0 AND current_score <= 100", name="current_score"),
)
Index("ix_portfolio_entries_renewal_date", portfolio_entries.c.renewal_date)

# Every verdict change (and the ledger's sold / dropped events), oldest first.
portfolio_verdict_history = Table(
    "portfolio_verdict_history",
    metadata,
    Column("id", Identifier, primary_key=True, autoincrement=True),
    Column(
        "entry_id",
        Identifier,
        ForeignKey("portfolio_entries.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("domain", String(253), nullable=False),
    # "verdict": a verdict changed; "sold" / "dropped": the ledger closed the entry.
    Column("kind", String(16), nullable=False),
    Column("old_verdict", String(16)),
    Column("new_verdict", String(16)),
    Column("method", String(16)),
    Column("reason", Text, nullable=False),
    Column("at", UTCDateTime, nullable=False),
    CheckConstraint("kind IN ('verdict', 'sold', 'dropped')", name="kind"),
)
Index(
    "ix_portfolio_verdict_history_entry_id",
    portfolio_verdict_history.c.entry_id,
    portfolio_verdict_history.c.id,
)

# What happened to a name in the end (the backtest joins sales to scores).
# No foreign key to the portfolio: outcomes are also recorded for names never held in it.
outcomes = Table(
    "outcomes",
    metadata,
    Column("id", Identifier, primary_key=True, autoincrement=True),
    Column("domain", String(253), nullable=False),
    Column("type", String(16), nullable=False),
    Column("sale_price", Float),
    Column("currency", String(3)),
    Column("date", Date, nullable=False),
    Column("venue", String(200)),
    Column("fees", Float),
    # Acquisition plus renewals paid when the portfolio closed the entry (the sunk cost of a drop).
    Column("cost_basis", Float),
    Column("notes", Text),
    Column("created_at", UTCDateTime, nullable=False),
    CheckConstraint("type IN ('sold', 'dropped', 'expired')", name="type"),
)
Index("ix_outcomes_domain", outcomes.c.domain)
Index("ix_outcomes_date", outcomes.c.date)

# --- the watchlist and renewal alerts (migration 0007) -----------------------------------------
WATCH_STATUSES = ("available", "registered", "unknown")

DROP_PHASES = (
    "none",
    "auto_renew_period",
    "redemption_period",
    "pending_restore",
    "pending_delete",
)

watchlist_entries = Table(
    "watchlist_entries",
    metadata,
    Column("id", Identifier, primary_key=True, autoincrement=True),
    Column("domain", String(253), nullable=False, unique=True),
    Column("notes", Text),
    Column("last_checked_at", UTCDateTime),
    # The last conclusive answer; a lookup that failed leaves it as it was (ADR 0022).
    Column("last_status", String(16)),
    Column("last_detail", Text),  # what the last lookup said ("RDAP 404", "timeout", ...)
    Column("last_status_change_at", UTCDateTime),
    # Set when "available" was notified; cleared (re-armed) only when seen registered again.
    Column("notified", Boolean, nullable=False, server_default=text("false")),
    Column("notified_at", UTCDateTime),
    Column("created_at", UTCDateTime, nullable=False),
    # The last RDAP answer's status values (RFC 9083 spelling, ", "-joined) and dates. Like
    # last_status, a lookup without them leaves them as they were; "available" clears them.
    Column("rdap_statuses", Text),
    Column("rdap_expires_on", Date),
    Column("rdap_last_changed_on", Date),
    # What the statuses say about deletion (watchlist.drops.DropPhase), since when a poll has
    # seen it, and the drop day its registry's grace periods give (NULL: no estimate, with
    # the reason in drop_estimate).
    Column("drop_phase", String(24)),
    Column("drop_phase_since", UTCDateTime),
    Column("expected_drop_on", Date),
    Column("drop_estimate", Text),
    # The phase last notified: each change of phase is notified once (compare-and-set).
    Column("drop_notified_phase", String(24)),
    Column("drop_notified_at", UTCDateTime),
    CheckConstraint("last_status IN ('available', 'registered', 'unknown')", name="last_status"),
    CheckConstraint(f"drop_phase IN {DROP_PHASES}", name="drop_phase"),
    CheckConstraint(f"drop_notified_phase IN {DROP_PHASES}", name="drop_notified_phase"),
)
Index("ix_watchlist_entries_last_checked_at", watchlist_entries.c.last_checked_at)

ALERT_TYPES = ("past_due", "critical", "imminent")
ALERT_SEVERITIES = ("critical", "warning")

# One row per (domain, type). A row is about one renewal date: when the entry's date moves on
# (renewed) the row is resolved, and reused if the next cycle reaches the same type again.
renewal_alerts = Table(
    "renewal_alerts",
    metadata,
    Column("id", Identifier, primary_key=True, autoincrement=True),
    Column(
        "entry_id",
        Identifier,
        ForeignKey("portfolio_entries.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("domain", String(253), nullable=False),
    Column("type", String(16), nullable=False),
    Column("severity", String(16), nullable=False),
    Column("renewal_date", Date, nullable=False),
    Column("days_left", Integer, nullable=False),  # as of the last check
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    # Set when a more severe alert of the same renewal superseded this one.
    Column("escalated_at", UTCDateTime),
    Column("acknowledged_at", UTCDateTime),
    Column("notified_at", UTCDateTime),
    # Set when the renewal it is about is no longer due (renewed, or the entry left the portfolio).
    Column("resolved_at", UTCDateTime),
    UniqueConstraint("domain", "type"),
    CheckConstraint("type IN ('past_due', 'critical', 'imminent')", name="type"),
    CheckConstraint("severity IN ('critical', 'warning')", name="severity"),
)
Index("ix_renewal_alerts_entry_id", renewal_alerts.c.entry_id)

# --- the backtest and weight tuning (migration 0009) -------------------------------------------
# One row per (sold outcome, scoring row): the last score computed before the sale, copied with
# what the report, the suggester and the calibration need, so pruning old runs keeps the backtest
# (hence no foreign key to scoring_runs). Money in the scoring currency (ADR 0025).
CONFIDENCE_BUCKETS = ("low", "mid", "high")

backtest_signals = Table(
    "backtest_signals",
    metadata,
    Column("id", Identifier, primary_key=True, autoincrement=True),
    Column("outcome_id", Identifier, ForeignKey("outcomes.id", ondelete="CASCADE"), nullable=False),
    Column("scoring_id", BigInteger, nullable=False),
    Column("run_id", BigInteger, nullable=False),
    Column("domain", String(253), nullable=False),
    Column("sale_date", Date, nullable=False),
    Column("scored_at", UTCDateTime, nullable=False),
    Column("realised_price", Float, nullable=False),
    Column("currency", String(3), nullable=False),
    Column("predicted_value", Float, nullable=False),
    Column("buy_max", Float, nullable=False),
    Column("confidence", Float, nullable=False),
    Column("confidence_bucket", String(8), nullable=False),
    Column("weighted_score", Float, nullable=False),
    Column("intrinsic", Float, nullable=False),
    Column("commercial", Float),
    Column("market", Float),
    Column("expiry", Float),
    Column("recommended", Boolean, nullable=False),
    Column("absolute_error", Float, nullable=False),
    Column("signed_error", Float, nullable=False),
    # NULL when the score's details did not hold them (a price missing from the table).
    Column("holding_cost", Float),
    Column("carrying_cost", Float),
    # The comparable-sales-only baseline: the recency-weighted median of the relevant sales the
    # score listed; NULL when it listed none.
    Column("baseline_value", Float),
    Column("baseline_sales", Integer, nullable=False),
    # What re-weighing and calibration read: anchors, coverage ratio, gates, money inputs.
    Column("inputs", Document, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("outcome_id", "scoring_id"),
    CheckConstraint("confidence_bucket IN ('low', 'mid', 'high')", name="confidence_bucket"),
)
Index("ix_backtest_signals_sale_date", backtest_signals.c.sale_date)

# Every weight tune, applied or not: its inputs, each safety check and the decision.
weight_tunes = Table(
    "weight_tunes",
    metadata,
    Column("id", Identifier, primary_key=True, autoincrement=True),
    Column("created_at", UTCDateTime, nullable=False),
    # "job" (WEIGHT_TUNE) or "cli" (backtest suggest-weights); the job's id when a job.
    Column("origin", String(16), nullable=False),
    Column("job_id", BigInteger),
    Column("sample_size", Integer, nullable=False),
    Column("dry_run", Boolean, nullable=False),
    Column("safety_passed", Boolean, nullable=False),
    Column("applied", Boolean, nullable=False),
    Column("decision", Text, nullable=False),
    Column("failures", Document, nullable=False),
    Column("checks", Document, nullable=False),
    Column("inputs", Document, nullable=False),
    Column("weights_before", Document, nullable=False),
    Column("weights_after", Document, nullable=False),
    # The weight set written when applied.
    Column("weight_set_id", BigInteger),
)

# Calibrated decision thresholds, versioned like weight sets: the active set is the one
# activated last; its values override the SCORING_* settings they name (ADR 0025).
threshold_sets = Table(
    "threshold_sets",
    metadata,
    Column("id", Identifier, primary_key=True, autoincrement=True),
    Column("name", String(100), nullable=False),
    Column("thresholds", Document, nullable=False),
    # "calibrated" (backtest calibrate --apply), "rollback", "default".
    Column("source", String(32), nullable=False),
    Column("notes", Text),
    Column("created_at", UTCDateTime, nullable=False),
    Column("activated_at", UTCDateTime),
)
Index("ix_threshold_sets_activated_at", threshold_sets.c.activated_at)

# --- the dashboard's sessions (migration 0012) -------------------------------------------------
# One row (id 1): the generation a dashboard session cookie must carry to be valid. Logging out
# adds one, ending every session issued before, on every process serving the dashboard. No row
# yet: generation 0.
dashboard_session_generation = Table(
    "dashboard_session_generation",
    metadata,
    Column("id", SmallInteger, primary_key=True, autoincrement=False),
    Column("generation", BigInteger, nullable=False),
    CheckConstraint("id = 1", name="single_row"),
)
