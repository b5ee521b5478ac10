"""The job store on SQL databases (SQLite and PostgreSQL) through SQLAlchemy Core."""

from dominus.db.errors import is_busy_error
from dominus.jobs.sql.store import SqlJobStore

__all__ = ["SqlJobStore", "is_busy_error"]
