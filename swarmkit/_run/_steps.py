"""What one step of the loop did, as a value the driver dispatches on; events are only output.

A step that pauses for a person or stops at a limit unwinds as ``Interrupted`` / ``StopRun``
(``_state``): those can happen at any depth of a step (a tool's approval inside a turn's tool
calls), and the driver's one ``try`` turns them into the run's end.
"""

from __future__ import annotations

from dataclasses import dataclass

from swarmkit import events as ev


@dataclass(frozen=True, slots=True)
class Answered:
    """The active agent's answer stands: the run ends with it."""


@dataclass(frozen=True, slots=True)
class HandedOff:
    """Control passed to another agent; the next step is the new agent's."""

    events: tuple[ev.Event, ...] = ()
    """What to stream for it (the handoff, the new agent's start), unless already streamed."""


@dataclass(frozen=True, slots=True)
class Continued:
    """The same agent goes on (tool results to read, a refused handoff, an answer sent back)."""

    events: tuple[ev.Event, ...] = ()
    """What to stream for it, unless already streamed."""


@dataclass(frozen=True, slots=True)
class Refused:
    """A handoff that was asked for and not performed; the asking agent goes on."""

    event: ev.HandoffRefused
    """Why, as streamed."""


Step = Answered | HandedOff | Continued
"""What a step of the active agent came to."""

HandoffOutcome = HandedOff | Refused
"""What asking for one handoff came to."""
