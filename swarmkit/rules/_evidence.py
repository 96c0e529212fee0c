"""How sure agreement counts make us: the Wilson score interval at 95%."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

Z = 1.96
"""The normal quantile of a two-sided 95% interval."""


def wilson(agreements: int, fired: int, z: float = Z) -> tuple[float, float]:
    """The Wilson score interval (lower, upper) of ``agreements`` in ``fired`` decisions:
    p = a/n, centre (p + z²/2n)/(1 + z²/n), half-width z·sqrt(p(1-p)/n + z²/4n²)/(1 + z²/n).
    With no fired decision nothing is known: (0.0, 1.0)."""
    if fired <= 0:
        return 0.0, 1.0
    p = agreements / fired
    z2 = z * z
    scale = 1 + z2 / fired
    centre = (p + z2 / (2 * fired)) / scale
    half = z * math.sqrt(p * (1 - p) / fired + z2 / (4 * fired * fired)) / scale
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True, kw_only=True, slots=True)
class Evidence:
    """Agreement of one rule with the model: ``agreements`` in ``fired`` decisions."""

    fired: int
    """Decisions where the rule fired (and the model decided too)."""
    agreements: int
    """Of those, the ones where the rule named the agent the model chose."""

    @property
    def rate(self) -> float | None:
        """agreements / fired; None before the rule ever fired."""
        return self.agreements / self.fired if self.fired else None

    @property
    def lower(self) -> float:
        """The Wilson 95% lower bound of the agreement rate."""
        return wilson(self.agreements, self.fired)[0]

    @property
    def upper(self) -> float:
        """The Wilson 95% upper bound of the agreement rate."""
        return wilson(self.agreements, self.fired)[1]

    def to_data(self) -> dict[str, Any]:
        """JSON-safe: the counts, the rate and both bounds."""
        lower, upper = wilson(self.agreements, self.fired)
        return {
            "fired": self.fired,
            "agreements": self.agreements,
            "rate": self.rate,
            "lower": lower,
            "upper": upper,
        }
