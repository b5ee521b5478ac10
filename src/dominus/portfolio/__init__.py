"""The portfolio: names held, their renewal clock, verdicts, rescoring, imports and the ledger."""
