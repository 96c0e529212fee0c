"""How long each step of a journaled session took, from the times its records carry."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from swarmkit.journal._records import JournalRecord


@dataclass(frozen=True, kw_only=True, slots=True)
class StepTime:
    """When one record's step began and ended, and which agent spent the time."""

    start: float
    """Unix seconds the step began: when the record before it was made."""
    end: float
    """Unix seconds the record was made."""
    agent: str | None
    """The agent active during the step."""

    @property
    def duration(self) -> float:
        """Seconds the step took."""
        return max(0.0, self.end - self.start)


def step_times(records: Sequence[JournalRecord]) -> list[StepTime]:
    """Each record's step on the session's clock; [] when a record carries no time.

    A step begins when the record before it was made, so model and tool calls show their
    latency; the wait of a paused session for its decision is the ``resumed`` step's.
    """
    if not records or any(not isinstance(r.at, int | float) for r in records):
        return []
    times: list[StepTime] = []
    previous = float(records[0].at)  # type: ignore[arg-type]
    agent: str | None = None
    for record in records:
        at = float(record.at)  # type: ignore[arg-type]
        named = record.data.get("agent") if record.kind != "handoff" else record.data.get("target")
        agent = named if isinstance(named, str) else agent
        # The wait for a person's decision is nobody's work: the resumed step has no agent.
        spent_by = None if record.kind == "resumed" else agent
        times.append(StepTime(start=previous, end=at, agent=spent_by))
        previous = at
    return times
