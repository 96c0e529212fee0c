"""Finding: one thing ``swarm.check()`` found, as data."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

Severity = Literal["error", "warning"]
"""``error``: the configuration certainly does not do what it says; ``warning``: it may not."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Finding:
    """One problem in a swarm's configuration, found before any model call."""

    code: str
    """A stable name for the kind of problem, e.g. ``edge_shadowed``."""
    severity: Severity
    """``error`` or ``warning``."""
    where: str
    """The part of the configuration, e.g. ``graph edge triage -> billing (rule 2)``."""
    message: str
    """What is wrong."""
    fix: str
    """How to fix it."""

    def to_data(self) -> dict[str, Any]:
        """The finding as JSON-safe data."""
        return asdict(self)

    def __str__(self) -> str:
        return f"{self.severity}: {self.code} at {self.where}: {self.message} (fix: {self.fix})"
