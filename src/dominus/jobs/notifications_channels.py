"""The LISTEN/NOTIFY channel names, shared by the store (which notifies) and the listener."""

JOBS_CHANNEL = "dominus_jobs"
CANCEL_CHANNEL = "dominus_cancel"
