"""The HTTP API (FastAPI). `create_app` builds it; nothing is created at import time."""

from dominus.api.app import create_app

__all__ = ["create_app"]
