"""DOMINUS's schedules on the engine's scheduler (`dominus.jobs.scheduling`): the default
schedules and their settings (`defaults`, `settings`), and what the CLI and the API do with them
(`service`). ADR 0019."""
