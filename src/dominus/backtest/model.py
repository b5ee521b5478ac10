"""The backtest's records and errors: outcomes as recorded (with the build they enqueued), and
what refuses an outcome or a calibration."""

from __future__ import annotations

from dataclasses import dataclass

from dominus.errors import ConflictError, InvalidInputError
from dominus.portfolio.model import Outcome


class OutcomeInputError(InvalidInputError):
    """An outcome's input is invalid (the message says which field and why)."""

    code = "invalid_outcome"


class CalibrationError(ConflictError):
    """No threshold setting to apply (no snapshot, or none reaches the target precision)."""


@dataclass(frozen=True)
class RecordedOutcomes:
    outcomes: list[Outcome]
    build_job_id: int | None
    build_created: bool
