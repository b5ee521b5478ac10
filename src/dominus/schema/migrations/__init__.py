"""Alembic migrations: one history for SQLite and PostgreSQL."""
