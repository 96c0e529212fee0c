"""A resumed run as AG-UI streams it: only its own events, not the steps the journal replays
up to the pause (the paused run's stream already told a client about those)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterable, Iterator, Sequence
from dataclasses import dataclass

from swarmkit.events import (
    AgentStarted,
    Event,
    HandoffPerformed,
    ModelCallFinished,
    ModelCallStarted,
    RunFinished,
    RunStarted,
    ToolResulted,
)
from swarmkit.interrupts import Decision
from swarmkit.journal import Journal, JournalRecord
from swarmkit.swarm import Swarm


@dataclass(frozen=True, kw_only=True, slots=True)
class PausedRun:
    """What a paused session had done, as its journal holds it."""

    turns: int
    """Model calls made."""
    handoffs: int
    """Handoffs performed."""
    agents: int
    """Agents started."""
    results: frozenset[str]
    """The ids of the tool calls that have a result."""

    @classmethod
    def of(cls, records: Sequence[JournalRecord]) -> PausedRun:
        """The paused run that ``records`` journal."""
        kinds = [record.kind for record in records]
        results = (r.data.get("id") for r in records if r.kind == "tool_call")
        return cls(
            turns=kinds.count("model_call"),
            handoffs=kinds.count("handoff"),
            agents=kinds.count("agent_started"),
            results=frozenset(str(call_id) for call_id in results),
        )


async def resumed_events(
    swarm: Swarm, journal: Journal, session_id: str, decision: Decision
) -> AsyncGenerator[Event, None]:
    """The events of ``session_id`` resumed with ``decision``, from where it paused: the
    decided step (an approved tool's result, say) and everything after it."""
    paused = PausedRun.of(await journal.read(session_id))
    seen: list[Event] = []

    async def watch(events: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
        async for event in events:
            seen.append(event)
            yield event

    await swarm.with_observers(watch).resume(session_id, journal, decision=decision)
    for event in own_events(seen, paused):
        yield event


def own_events(events: Iterable[Event], paused: PausedRun) -> Iterator[Event]:
    """The run's start, then its events from the first one the paused run had not streamed."""
    agents = 0
    replaying = True
    for event in events:
        if isinstance(event, AgentStarted):
            agents += 1
        replaying = replaying and not _new(event, paused, agents)
        if not replaying or isinstance(event, RunStarted):
            yield event


def _new(event: Event, paused: PausedRun, agents: int) -> bool:
    """Whether ``event`` is past what the paused run did (the replay ends at the first)."""
    match event:
        case ModelCallStarted(turn=turn) | ModelCallFinished(turn=turn):
            return turn > paused.turns
        case ToolResulted(tool_call_id=call_id):
            return call_id not in paused.results
        case HandoffPerformed(number=number):
            return number > paused.handoffs
        case AgentStarted():
            return agents > paused.agents
        case RunFinished():
            return True
        case _:
            return False
