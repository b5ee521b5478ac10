"""Database maintenance: verified backups with retention (SQLite online copy, PostgreSQL
pg_dump), restore, vacuum, and the pruning of expired rows in bounded batches. ADR 0020."""
