"""Cron schedules for the job engine: each fire of each schedule enqueued exactly once, however
many schedulers run (see docs/adr/0019-cron-scheduler.md). Domain-free: which schedules exist
is the caller's business."""
