"""Renewal alerts: the renewal clock of the portfolio's entries, one alert per (domain, type),
escalation imminent → critical → past due, acknowledgement, notification (ADR 0022)."""
