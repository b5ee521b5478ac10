"""The portfolio's writes: entries added, changed and removed, scores recorded, verdicts
refreshed (every judgement rewrites the reason; a changed verdict is kept in the history), and
the ledger (sold, dropped → an outcome row and a history event).

Every write is one transaction; time comes from the caller (`now`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import date, datetime
from typing import Any

from sqlalchemy import Connection, Engine, delete, insert, select, update

from dominus.db.errors import database_errors
from dominus.portfolio.model import (
    EntryExistsError,
    EntryFields,
    EntryNotFoundError,
    EntryStatus,
    EntryStatusError,
    PortfolioEntry,
    PortfolioInputError,
    ScoreUpdate,
    VerdictChange,
    acquisition_problem,
    outcome_date_problem,
    utc_today,
)
from dominus.portfolio.renewal_prices import entry_renewal_price, pricing_of
from dominus.portfolio.settings import PortfolioSettings
from dominus.portfolio.store import entry_of, read_entries, read_entry
from dominus.portfolio.values import check_amount, parse_domain
from dominus.portfolio.verdicts import (
    Judgement,
    VerdictFacts,
    VerdictRules,
    judge,
    money_words,
)
from dominus.schema.tables import outcomes, portfolio_entries, portfolio_verdict_history
from dominus.scoring.config import ScoringConfig
from dominus.scoring.renewal_prices import RenewalPrice, RenewalPricing
from dominus.scoring.settings import scoring_config


def valid_domain(text: str) -> str:
    try:
        return parse_domain(text)[0]
    except ValueError as error:
        raise PortfolioInputError(str(error), code="invalid_domain") from None


def verdict_rules(settings: PortfolioSettings, config: ScoringConfig) -> VerdictRules:
    return VerdictRules(
        method=settings.DROP_METHOD,
        score_threshold=settings.DROP_SCORE_THRESHOLD,
        horizon_days=settings.DROP_RENEWAL_HORIZON_DAYS,
        currency=config.currency,
        sale_commission=config.sale_commission,
        annual_sell_through=config.annual_sell_through,
        confidence_cap=config.confidence_cap,
        list_multiplier=config.list_multiplier,
    )


def facts_of(entry: PortfolioEntry, renewal: RenewalPrice | None = None) -> VerdictFacts:
    """The verdict's view of the entry; `renewal` is the price the renewal lookup chose (default:
    the entry's own renewal cost only)."""
    return VerdictFacts(
        domain=entry.domain,
        renewal_date=entry.renewal_date,
        currency=entry.currency,
        acquisition_cost=entry.acquisition_cost,
        renewal_cost=entry.renewal_cost if renewal is None else renewal.amount,
        renewals_paid=entry.renewals_paid,
        current_score=entry.current_score,
        expected_value=entry.expected_value,
        confidence=entry.confidence,
        list_price=entry.list_price,
        suggested_list_price=entry.suggested_list_price,
        trademark=entry.trademark,
    )


# Enqueues the build that will read a sale, in the transaction recording it: (job id, created).
# The backtest's own (`dominus.backtest.ledger.ledger_service` passes it in), since the
# backtest sits above the portfolio.
EnqueueBuild = Callable[[Connection], tuple[int, bool]]


class PortfolioService:
    def __init__(
        self,
        engine: Engine,
        settings: PortfolioSettings,
        *,
        enqueue_build: EnqueueBuild | None = None,
    ) -> None:
        self.engine = engine
        self.settings = settings
        # None: a sale is recorded without enqueueing BACKTEST_BUILD (reads, imports, tests).
        self.enqueue_build = enqueue_build
        self.config = scoring_config(settings)
        self.rules = verdict_rules(settings, self.config)
        self.pricing: RenewalPricing = pricing_of(self.config)

    @property
    def currency(self) -> str:
        return self.config.currency

    def renewal_price(self, entry: PortfolioEntry) -> RenewalPrice:
        """The renewal figure the entry costs and which price it is (ADR 0046)."""
        return entry_renewal_price(entry, self.pricing)

    # --- entries ---------------------------------------------------------------------------
    def add(self, domain: str, values: EntryFields, now: datetime) -> PortfolioEntry:
        name = valid_domain(domain)
        values = _acquired_by(values.checked(), now)
        if values.renewal_date is None:
            raise PortfolioInputError("a renewal date is required (--renewal-date YYYY-MM-DD)")
        with database_errors(), self.engine.begin() as connection:
            if read_entry(connection, name) is not None:
                raise EntryExistsError(name)
            self.insert_entry(connection, name, values, now)
            self.refresh_verdicts_in(connection, now, [name])
            entry = read_entry(connection, name)
        assert entry is not None
        return entry

    def insert_entry(
        self, connection: Connection, domain: str, values: EntryFields, now: datetime
    ) -> None:
        # No renewal cost given stays unset: the renewal lookup prices it when used, so a later
        # registrar or table change is seen, and "your renewal cost" means one the owner set.
        row = values.given()
        connection.execute(
            insert(portfolio_entries).values(
                domain=domain,
                tld=parse_domain(domain)[1],
                currency=self.currency,
                status="active",
                renewals_paid=row.pop("renewals_paid", 0.0),
                created_at=now,
                updated_at=now,
                **row,
            )
        )

    def update(self, domain: str, values: EntryFields, now: datetime) -> PortfolioEntry:
        name = valid_domain(domain)
        values = _acquired_by(values.checked(), now)
        with database_errors(), self.engine.begin() as connection:
            entry = read_entry(connection, name)
            if entry is None:
                raise EntryNotFoundError(name)
            self.change_entry(connection, entry, values, now)
            self.refresh_verdicts_in(connection, now, [name])
            updated = read_entry(connection, name)
        assert updated is not None
        return updated

    @staticmethod
    def changes(entry: PortfolioEntry, values: EntryFields) -> dict[str, Any]:
        """The given values that differ from the entry's (a value not given never overwrites)."""
        return {key: value for key, value in values.given().items() if getattr(entry, key) != value}

    def change_entry(
        self, connection: Connection, entry: PortfolioEntry, values: EntryFields, now: datetime
    ) -> bool:
        changes = self.changes(entry, values)
        if changes:
            connection.execute(
                update(portfolio_entries)
                .where(portfolio_entries.c.id == entry.id)
                .values(**changes, updated_at=now)
            )
        return bool(changes)

    def remove(self, domain: str) -> PortfolioEntry:
        """Delete the entry and its history (a mistake undone; sold and dropped names are
        closed by the ledger instead, and stay)."""
        name = valid_domain(domain)
        with database_errors(), self.engine.begin() as connection:
            entry = read_entry(connection, name)
            if entry is None:
                raise EntryNotFoundError(name)
            connection.execute(delete(portfolio_entries).where(portfolio_entries.c.id == entry.id))
        return entry

    def get(self, domain: str) -> PortfolioEntry:
        name = valid_domain(domain)
        with database_errors(), self.engine.connect() as connection:
            entry = read_entry(connection, name)
        if entry is None:
            raise EntryNotFoundError(name)
        return entry

    def entries(self, *, status: EntryStatus | None = "active") -> list[PortfolioEntry]:
        with database_errors(), self.engine.connect() as connection:
            return read_entries(connection, status=status)

    # --- scores and verdicts -----------------------------------------------------------------
    def record_score(self, domain: str, score: ScoreUpdate, now: datetime) -> list[VerdictChange]:
        """Store a fresh score and list price, then refresh the entry's verdict."""
        self.store_score(domain, score, now)
        return self.refresh_verdicts(now, [domain])

    def store_score(self, domain: str, score: ScoreUpdate, now: datetime) -> bool:
        """Write the score, list price and their details; True when a figure changed."""
        figures = {
            "current_score": score.current_score,
            "expected_value": score.expected_value,
            "confidence": score.confidence,
            "suggested_list_price": score.suggested_list_price,
        }
        with database_errors(), self.engine.begin() as connection:
            entry = read_entry(connection, domain)
            if entry is None:
                raise EntryNotFoundError(domain)
            changed = any(getattr(entry, key) != value for key, value in figures.items())
            connection.execute(
                update(portfolio_entries)
                .where(portfolio_entries.c.id == entry.id)
                .values(**figures, score_details=score.details, scored_at=now, updated_at=now)
            )
        return changed

    def refresh_verdicts(
        self, now: datetime, domains: Sequence[str] | None = None
    ) -> list[VerdictChange]:
        with database_errors(), self.engine.begin() as connection:
            return self.refresh_verdicts_in(connection, now, domains)

    def refresh_verdicts_in(
        self, connection: Connection, now: datetime, domains: Iterable[str] | None = None
    ) -> list[VerdictChange]:
        """Judge the active entries (or these) as of `now`. Every judgement rewrites the
        verdict, its reason and its time: a reason states figures (days to the renewal, the
        score, the method's workings) that move while the verdict stays, and a stale one
        misleads. A changed verdict is also kept in the history and listed in the result."""
        query = select(portfolio_entries).where(portfolio_entries.c.status == "active")
        if domains is not None:
            query = query.where(portfolio_entries.c.domain.in_(list(domains)))
        changes = []
        for row in connection.execute(query.order_by(portfolio_entries.c.domain)).all():
            entry = entry_of(row)
            renewal = self.renewal_price(entry)
            judgement = judge(facts_of(entry, renewal), self.rules, now)
            judgement = priced_reason(judgement, renewal)
            connection.execute(
                update(portfolio_entries)
                .where(portfolio_entries.c.id == entry.id)
                .values(verdict=judgement.verdict, verdict_reason=judgement.reason, verdict_at=now)
            )
            if judgement.verdict == entry.verdict:
                continue
            connection.execute(
                insert(portfolio_verdict_history).values(
                    entry_id=entry.id,
                    domain=entry.domain,
                    kind="verdict",
                    old_verdict=entry.verdict,
                    new_verdict=judgement.verdict,
                    method=self.rules.method,
                    reason=judgement.reason,
                    at=now,
                )
            )
            changes.append(
                VerdictChange(entry.domain, entry.verdict, judgement.verdict, judgement.reason)
            )
        return changes

    # --- the ledger --------------------------------------------------------------------------
    def sold(
        self,
        domain: str,
        *,
        price: float,
        fees: float = 0.0,
        on: date | None = None,
        venue: str | None = None,
        now: datetime,
    ) -> dict[str, Any]:
        """Close the entry as sold: an outcome row (for the backtest) and a history event;
        realised profit = price − fees − acquisition − renewals paid. Without an acquisition
        cost the cost and the profit are unknown (None, `cost_unknown`), never counted as $0.
        A sale with a price enqueues BACKTEST_BUILD in the same transaction, as `outcomes add`
        does (when the service was given `enqueue_build`); `build_job_id` names it (null
        otherwise)."""
        try:
            price, fees = check_amount(price), check_amount(fees)
        except ValueError as error:
            raise PortfolioInputError(f"price and fees: {error}") from None
        name = valid_domain(domain)
        day = outcome_day(on, now)
        build: tuple[int | None, bool] = (None, False)
        with database_errors(), self.engine.begin() as connection:
            entry = self._active(connection, name)
            cost = entry_cost(entry)
            profit = None if cost is None else round(price - fees - cost, 2)
            reason = _sale_words(price, fees, cost, profit, entry.currency)
            self._close(connection, entry, "sold", reason, now)
            connection.execute(
                insert(outcomes).values(
                    domain=name,
                    type="sold",
                    sale_price=price,
                    currency=entry.currency,
                    date=day,
                    venue=venue,
                    fees=fees,
                    cost_basis=cost,
                    created_at=now,
                )
            )
            if self.enqueue_build is not None and price > 0:
                build = self.enqueue_build(connection)
        return {"domain": name, "type": "sold", "date": day.isoformat(), "price": price,
                "fees": fees, "cost": cost, "realised_profit": profit,
                "cost_unknown": cost is None, "currency": entry.currency, "venue": venue,
                "build_job_id": build[0], "build_created": build[1]}  # fmt: skip

    def drop(self, domain: str, *, on: date | None = None, now: datetime) -> dict[str, Any]:
        """Close the entry as dropped (not renewed): an outcome row with its sunk cost
        (unknown, None, without an acquisition cost)."""
        name = valid_domain(domain)
        day = outcome_day(on, now)
        with database_errors(), self.engine.begin() as connection:
            entry = self._active(connection, name)
            cost = entry_cost(entry)
            sunk = UNKNOWN_COST if cost is None else money_words(cost, entry.currency)
            reason = f"dropped: sunk cost {sunk}"
            self._close(connection, entry, "dropped", reason, now)
            connection.execute(
                insert(outcomes).values(
                    domain=name,
                    type="dropped",
                    currency=entry.currency,
                    date=day,
                    cost_basis=cost,
                    created_at=now,
                )
            )
        return {"domain": name, "type": "dropped", "date": day.isoformat(), "sunk_cost": cost,
                "realised_profit": None if cost is None else -cost,
                "cost_unknown": cost is None, "currency": entry.currency}  # fmt: skip

    @staticmethod
    def _active(connection: Connection, name: str) -> PortfolioEntry:
        entry = read_entry(connection, name)
        if entry is None:
            raise EntryNotFoundError(name)
        if entry.status != "active":
            raise EntryStatusError(f"{name} is already {entry.status}")
        return entry

    @staticmethod
    def _close(
        connection: Connection, entry: PortfolioEntry, status: str, reason: str, now: datetime
    ) -> None:
        connection.execute(
            update(portfolio_entries)
            .where(portfolio_entries.c.id == entry.id)
            .values(status=status, updated_at=now)
        )
        connection.execute(
            insert(portfolio_verdict_history).values(
                entry_id=entry.id,
                domain=entry.domain,
                kind=status,
                old_verdict=entry.verdict,
                reason=reason,
                at=now,
            )
        )


def priced_reason(judgement: Judgement, renewal: RenewalPrice) -> Judgement:
    """The reason, naming the renewal price it weighed when that is not the owner's own."""
    if renewal.kind in ("own", "unknown") or "renewal" not in judgement.reason:
        return judgement
    return replace(judgement, reason=f"{judgement.reason} [renewal price: {renewal.label}]")


UNKNOWN_COST = "unknown (no acquisition cost given)"


def entry_cost(entry: PortfolioEntry) -> float | None:
    """Acquisition plus the renewals paid; None when the acquisition cost is unknown (counting
    it as $0 would make a sale's whole price profit and inflate every ROI it enters)."""
    if entry.acquisition_cost is None:
        return None
    return round(entry.acquisition_cost + entry.renewals_paid, 2)


def _sale_words(
    price: float, fees: float, cost: float | None, profit: float | None, currency: str
) -> str:
    sold = f"sold for {money_words(price, currency)} less fees {money_words(fees, currency)}"
    if cost is None or profit is None:
        return f"{sold}; cost unknown (no acquisition cost given), so its profit is unknown"
    return (
        f"{sold} and cost {money_words(cost, currency)}: realised profit "
        f"{money_words(profit, currency)}"
    )


def outcome_day(on: date | None, now: datetime) -> date:
    """The day of a sale or drop: the one given (not after today, the rule `outcomes add`
    applies) or today (UTC)."""
    today = utc_today(now)
    day = on or today
    problem = outcome_date_problem(day, today)
    if problem is not None:
        raise PortfolioInputError(problem, code="invalid_outcome")
    return day


def _acquired_by(values: EntryFields, now: datetime) -> EntryFields:
    problem = acquisition_problem(values, utc_today(now))
    if problem is not None:
        raise PortfolioInputError(f"acquired_at: {problem}")
    return values
