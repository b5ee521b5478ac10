"""Database access: engine factory, schema (SQLAlchemy Core tables) and Alembic migrations."""
