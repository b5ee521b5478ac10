"""The backtest: sale outcomes joined to the score computed before each sale, error metrics beside
a comparable-sales-only baseline, weight suggestions without machine learning, the weight tuner
and its safety checks, and threshold calibration (ADR 0025)."""
