"""The renewal alerts' rows: what a check writes for one entry (in one transaction), the
compare-and-set that sends each alert's notification once, listing and acknowledging.

A row is about one renewal date. When the entry's date moves on (it was renewed) or the entry
leaves the portfolio, its open rows are resolved; a (domain, type) row that is needed again for
a later renewal is re-armed in place (the unique key is (domain, type)): new creation time, not
acknowledged, not notified.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, and_, insert, select, update

from dominus.db.errors import database_errors
from dominus.portfolio.model import PortfolioEntry
from dominus.renewals.model import AlertNotFoundError, AlertType, EntryOutcome, RenewalAlert
from dominus.schema.tables import portfolio_entries, renewal_alerts


def alert_of(row: Any) -> RenewalAlert:
    values = {column.name: row._mapping[column.name] for column in renewal_alerts.c}
    values["type"] = AlertType(values["type"])
    return RenewalAlert(**values)


UNRESOLVED = renewal_alerts.c.resolved_at.is_(None)
OPEN = and_(
    UNRESOLVED,
    renewal_alerts.c.escalated_at.is_(None),
    renewal_alerts.c.acknowledged_at.is_(None),
)
NEEDS_NOTICE = and_(
    UNRESOLVED,
    renewal_alerts.c.notified_at.is_(None),
    renewal_alerts.c.escalated_at.is_(None),
    renewal_alerts.c.acknowledged_at.is_(None),
)


class AlertStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    # --- what a check writes ---------------------------------------------------------------
    def resolve_departed(self, now: datetime) -> int:
        """Resolve the open alerts of entries no longer active (sold or dropped)."""
        active = select(portfolio_entries.c.id).where(portfolio_entries.c.status == "active")
        with database_errors(), self.engine.begin() as connection:
            return connection.execute(
                update(renewal_alerts)
                .where(UNRESOLVED, renewal_alerts.c.entry_id.not_in(active))
                .values(resolved_at=now, updated_at=now)
            ).rowcount

    def record(
        self, entry: PortfolioEntry, level: AlertType | None, days_left: int, now: datetime
    ) -> EntryOutcome:
        """Bring the entry's alerts in line with its renewal clock, in one transaction."""
        with database_errors(), self.engine.begin() as connection:
            current = _current_alerts(connection, entry, level, now)
            if level is None:
                return EntryOutcome()
            existing = current.get(level)
            if existing is not None:
                _refresh(connection, existing, days_left, now)
                return EntryOutcome()
            lower = sorted(
                (alert for alert in current.values() if alert.type.rank < level.rank),
                key=lambda alert: alert.type.rank,
            )
            alert_id = _arm(connection, entry, level, days_left, now)
            for alert in lower:
                if alert.escalated_at is None:
                    _set(connection, alert.id, escalated_at=now, updated_at=now)
            return EntryOutcome(alert_id, lower[-1].type if lower else None)

    def pending_notices(self, domain: str) -> list[RenewalAlert]:
        """The domain's alerts that need a notification: open and never notified."""
        with database_errors(), self.engine.connect() as connection:
            rows = connection.execute(
                select(renewal_alerts)
                .where(NEEDS_NOTICE, renewal_alerts.c.domain == domain)
                .order_by(renewal_alerts.c.id)
            )
            return [alert_of(row) for row in rows]

    def claim_notice(self, alert_id: int, now: datetime) -> bool:
        """Mark the alert notified; True only for the caller that did, so an alert's
        notification is sent once however many checks race."""
        with database_errors(), self.engine.begin() as connection:
            claimed = connection.execute(
                update(renewal_alerts)
                .where(renewal_alerts.c.id == alert_id, NEEDS_NOTICE)
                .values(notified_at=now)
            ).rowcount
        return bool(claimed == 1)

    # --- what people do ------------------------------------------------------------------
    def alerts(self, *, include_closed: bool = False) -> list[RenewalAlert]:
        """Open alerts (not acknowledged, escalated or resolved), or with `include_closed`
        every alert; the most severe first, then the nearest renewal."""
        query = select(renewal_alerts)
        if not include_closed:
            query = query.where(OPEN)
        with database_errors(), self.engine.connect() as connection:
            alerts = [alert_of(row) for row in connection.execute(query)]
        return sorted(alerts, key=_severity_first)

    def get(self, alert_id: int) -> RenewalAlert:
        with database_errors(), self.engine.connect() as connection:
            return _read(connection, alert_id)

    def acknowledge(self, alert_id: int, now: datetime) -> RenewalAlert:
        """Acknowledge the alert (again: unchanged, it keeps its first acknowledgement)."""
        with database_errors(), self.engine.begin() as connection:
            connection.execute(
                update(renewal_alerts)
                .where(renewal_alerts.c.id == alert_id, renewal_alerts.c.acknowledged_at.is_(None))
                .values(acknowledged_at=now, updated_at=now)
            )
            return _read(connection, alert_id)

    def acknowledge_all(self, now: datetime) -> list[RenewalAlert]:
        """Acknowledge every open alert (not acknowledged, escalated or resolved), in one
        statement; the alerts it acknowledged, as `alerts()` orders them."""
        with database_errors(), self.engine.begin() as connection:
            ids = [
                int(alert_id)
                for alert_id in connection.execute(
                    update(renewal_alerts)
                    .where(OPEN)
                    .values(acknowledged_at=now, updated_at=now)
                    .returning(renewal_alerts.c.id)
                ).scalars()
            ]
            rows = connection.execute(select(renewal_alerts).where(renewal_alerts.c.id.in_(ids)))
            alerts = [alert_of(row) for row in rows]
        return sorted(alerts, key=_severity_first)


def _severity_first(alert: RenewalAlert) -> tuple[int, int, str]:
    return (-alert.type.rank, alert.days_left, alert.domain)


def _current_alerts(
    connection: Connection, entry: PortfolioEntry, level: AlertType | None, now: datetime
) -> dict[AlertType, RenewalAlert]:
    """The entry's unresolved alerts of its present renewal date, by type, after resolving
    those about another date (renewed) or more severe than its clock says (the thresholds
    or the date changed)."""
    rows = connection.execute(
        select(renewal_alerts).where(renewal_alerts.c.domain == entry.domain, UNRESOLVED)
    )
    current: dict[AlertType, RenewalAlert] = {}
    rank = 0 if level is None else level.rank
    for alert in (alert_of(row) for row in rows):
        if alert.renewal_date != entry.renewal_date or alert.type.rank > rank:
            _set(connection, alert.id, resolved_at=now, updated_at=now)
        else:
            current[alert.type] = alert
    return current


def _refresh(connection: Connection, alert: RenewalAlert, days_left: int, now: datetime) -> None:
    """The alert of the entry's present level: its days left kept current. Acknowledged stays
    acknowledged. If it was escalated, the more severe alert was just resolved (the thresholds
    changed), so it is the current alert again."""
    if alert.days_left != days_left or alert.escalated_at is not None:
        _set(connection, alert.id, days_left=days_left, escalated_at=None, updated_at=now)


def _arm(
    connection: Connection, entry: PortfolioEntry, level: AlertType, days_left: int, now: datetime
) -> int:
    """Create the (domain, type) alert, or re-arm its resolved row for this renewal."""
    values: dict[str, Any] = {
        "entry_id": entry.id,
        "severity": level.severity,
        "renewal_date": entry.renewal_date,
        "days_left": days_left,
        "created_at": now,
        "updated_at": now,
        "escalated_at": None,
        "acknowledged_at": None,
        "notified_at": None,
        "resolved_at": None,
    }
    existing = connection.execute(
        select(renewal_alerts.c.id).where(
            renewal_alerts.c.domain == entry.domain, renewal_alerts.c.type == level.value
        )
    ).scalar_one_or_none()
    if existing is not None:
        _set(connection, existing, **values)
        return int(existing)
    inserted = connection.execute(
        insert(renewal_alerts)
        .values(domain=entry.domain, type=level.value, **values)
        .returning(renewal_alerts.c.id)
    ).scalar_one()
    return int(inserted)


def _set(connection: Connection, alert_id: int, **values: Any) -> None:
    connection.execute(update(renewal_alerts).where(renewal_alerts.c.id == alert_id).values(values))


def _read(connection: Connection, alert_id: int) -> RenewalAlert:
    row = connection.execute(select(renewal_alerts).where(renewal_alerts.c.id == alert_id)).first()
    if row is None:
        raise AlertNotFoundError(f"no renewal alert with id {alert_id}")
    return alert_of(row)
