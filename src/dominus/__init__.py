"""DOMINUS: decision support for domain-name investors, on a durable job engine."""

__version__ = "0.1.0"
