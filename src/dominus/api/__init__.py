"""The HTTP API (FastAPI): its routes, services and guards. The served app, with the dashboard,
is `dominus.server.create_app`; nothing is created at import time."""
