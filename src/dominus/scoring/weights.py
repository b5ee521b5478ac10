"""The four signal weights. They are relative: the engine divides by their sum, so (3, 3.5, 2.5, 1)
means the same as the defaults (0.30, 0.35, 0.25, 0.10)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

SIGNALS: tuple[str, ...] = ("intrinsic", "commercial", "market", "expiry")


@dataclass(frozen=True)
class Weights:
    intrinsic: float = 0.30
    commercial: float = 0.35
    market: float = 0.25
    expiry: float = 0.10

    def validate(self) -> Weights:
        """Raise ValueError unless each weight is finite and ≥ 0 and the sum is > 0; return self."""
        for name in SIGNALS:
            value = getattr(self, name)
            # bool is an int subclass; a True weight is a caller bug, not a weight of 1
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"weight {name!r} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise ValueError(f"weight {name!r} must be finite, got {value!r}")
            if value < 0:
                raise ValueError(f"weight {name!r} must not be negative, got {value!r}")
        if self.total <= 0:
            raise ValueError("the weights must not all be zero")
        return self

    @property
    def total(self) -> float:
        return self.intrinsic + self.commercial + self.market + self.expiry

    def to_dict(self) -> dict[str, float]:
        return {name: float(value) for name, value in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Weights:
        """Build and validate. Missing signals keep their default; unknown keys are refused so a
        typo ("comercial") cannot silently fall back to a default."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown weight(s): {', '.join(unknown)}")
        return cls(**{name: data[name] for name in known if name in data}).validate()
