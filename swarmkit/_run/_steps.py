"""What one step of the loop came to, as a value the driver dispatches on; events are only output.

A pause or a stop can happen at any depth of a step (a tool's approval inside a turn's tool
calls, a limit checked before a call): there it unwinds as the internal ``Interrupted`` /
``StopRun`` (``_state``) to the step's end, which turns it into the step's value (``ended``).
The driver only ever sees values.
"""

from __future__ import annotations

from dataclasses import dataclass

from swarmkit import events as ev
from swarmkit._run._state import Interrupted, StopRun
from swarmkit.exceptions import InputFilterError, ModelError
from swarmkit.interrupts import PendingDecision
from swarmkit.result import HandoffRecord, StopReason


@dataclass(frozen=True, slots=True)
class Answered:
    """The active agent's answer stands: the run ends with it."""

    events: tuple[ev.Event, ...] = ()
    """What to stream for it before the run's end, unless already streamed."""


@dataclass(frozen=True, slots=True)
class HandedOff:
    """Control passed to another agent; the next step is the new agent's."""

    record: HandoffRecord
    """The handoff performed: who handed off to whom, decided by what, with what payload."""
    events: tuple[ev.Event, ...] = ()
    """What to stream for it (the handoff, the new agent's start), unless already streamed."""


@dataclass(frozen=True, slots=True)
class Continued:
    """The same agent goes on (tool results to read, a refused handoff, an answer sent back)."""

    events: tuple[ev.Event, ...] = ()
    """What to stream for it, unless already streamed."""


GOES_ON = Continued()
"""The plain ``Continued`` (nothing to stream), shared: a value, made once, not every turn."""

ANSWERED = Answered()
"""The plain ``Answered`` (nothing to stream), shared like ``GOES_ON``."""


@dataclass(frozen=True, slots=True)
class Paused:
    """The run waits for a person's decision; ``resume`` goes on from here."""

    pending: PendingDecision
    """What the person is asked."""


@dataclass(frozen=True, slots=True)
class Stopped:
    """The run ends without an answer that stands: a limit, or a model or filter that failed."""

    reason: StopReason
    """Its stop reason."""
    error: BaseException | None = None
    """The failure, for ``error``."""


@dataclass(frozen=True, slots=True)
class Refused:
    """A handoff that was asked for and not performed; the asking agent goes on."""

    event: ev.HandoffRefused
    """Why, as streamed."""


Step = Answered | HandedOff | Continued | Paused | Stopped
"""What a step of the active agent came to."""

End = Answered | Paused | Stopped
"""How a run's last step ended it."""

HandoffOutcome = HandedOff | Refused
"""What asking for one handoff came to."""

TurnOutcome = HandedOff | Continued
"""What a turn's tool calls came to: the handoff one of them took, or none (the same agent
goes on, to read the results). Its events are streamed already."""

ENDING = (Interrupted, StopRun, ModelError, InputFilterError)
"""What ends a step from any depth; ``ended`` turns it into the step's value."""


def ended(exc: Exception) -> Paused | Stopped:
    """The step value of a pause, a stop, or a model or filter failure that ended a step."""
    if isinstance(exc, Interrupted):
        return Paused(exc.pending)
    if isinstance(exc, StopRun):
        return Stopped(exc.reason)
    return Stopped("error", error=exc)
