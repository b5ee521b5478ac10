"""The job store on SQL databases (SQLite and PostgreSQL) through SQLAlchemy Core."""

from dominus.jobs.sql.store import SqlJobStore, is_busy_error

__all__ = ["SqlJobStore", "is_busy_error"]
