"""The run loop's door to durability: the StepWriter protocol and what it is handed and answers.

The loop journals every step through a ``StepWriter`` and asks it what the journal held for
a step being replayed; ``swarmkit``'s own is the tape over a ``Journal``, and an engine with a
durable history of its own can give the loop another.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from swarmkit.exceptions import ModelError
    from swarmkit.interrupts import Decision
    from swarmkit.journal._records import Journal
    from swarmkit.messages import Message, ToolCall
    from swarmkit.models import ModelRequest, ModelResponse
    from swarmkit.tools import ToolOutcome


@dataclass(frozen=True, kw_only=True, slots=True)
class RequestHistory:
    """The messages a request sends after its system message, held by reference, not copied.

    They are ``view`` followed by the first ``count`` of ``items``. The run only ever appends
    to ``items`` (a new list replaces it when another agent starts), so a digester that saw an
    earlier count of the same list need only hash what was appended since.
    """

    view: tuple[Message, ...]
    """What the agent was given when it started."""
    items: Sequence[Message]
    """What it added since: the run's own list, appended to and never edited."""
    count: int
    """How many of ``items`` the request holds."""

    def messages(self, head: tuple[Message, ...] = ()) -> tuple[Message, ...]:
        """``head`` followed by these messages, copied out once (for a request that is sent
        or shown, never for one replayed)."""
        items = self.items if self.count == len(self.items) else self.items[: self.count]
        return (*head, *self.view, *items)

    def sent_with(self, request: ModelRequest) -> ModelRequest:
        """The whole request: ``request``'s system message followed by these messages."""
        # Built field by field: dataclasses.replace costs more than the rest of a live call's
        # bookkeeping (tests/journal/test_request_digest.py checks no field is left behind).
        return type(request)(
            messages=self.messages(request.messages[:1]),
            tools=request.tools,
            settings=request.settings,
            agent=request.agent,
            output_schema=request.output_schema,
            handoff_payload=request.handoff_payload,
        )


@dataclass(frozen=True, slots=True)
class Held:
    """What the journal holds for a step being replayed."""

    data: Mapping[str, Any] | None
    """The journaled record's data, or None when the journal holds none (nothing happened)."""


NOTHING_HELD = Held(data=None)
"""The journal holds no step here (a stop a resume went on from, or another kind)."""


class StepWriter(Protocol):
    """The run loop's only door to durability: it journals steps, or serves them back.

    ``Tape`` is the implementation for a swarmkit ``Journal`` (or none, or a mirror); an engine
    with a durable history of its own can give the loop another.
    """

    @property
    def keeps_records(self) -> bool:
        """Whether anything keeps what the run notes (a run with no journal: nothing)."""
        ...

    @property
    def store(self) -> Journal | None:
        """The journal the run writes itself, where it may keep journal-level facts (the
        names of its shadow rules); None for an engine's mirror, a replay, or no journal."""
        ...

    async def note(self, kind: str, data: Mapping[str, Any]) -> bool:
        """A step the run decides by itself (a handoff, a rule, its start and end); whether
        the journal held it (the step was replayed, not written)."""
        ...

    def held(self, kind: str) -> Held | None:
        """What the journal held for the next step, a user's callback of ``kind``: None when
        the step is live (the callback runs), else the journaled record's data (None when the
        journal holds another kind of step there)."""
        ...

    async def cancel(self, data: Mapping[str, Any]) -> None:
        """The run was cancelled (Ctrl-C, a cancelled task): journal its end with ``data``
        unless the step was the journal's to replay, write what is pending, let go."""
        ...

    def held_stop(self) -> Held | None:
        """What the journal held for a limit check at this point: None when the step is live
        (the run's limits decide); else the journaled ``limit_reached`` data, or no stop
        (a stop a resume went on from is stepped over)."""
        ...

    async def replayed_response(
        self, agent: str, turn: int, request: ModelRequest, history: RequestHistory | None = None
    ) -> ModelResponse | None:
        """The journaled response to this request, or None when the model must be called.

        With ``history``, the request's messages are its first (the system message) followed
        by the history's, held by reference (any others ``request`` holds are not read): a
        replayed step then never copies the run's whole history.
        """
        ...

    def record_response(
        self,
        agent: str,
        turn: int,
        request: ModelRequest,
        response: ModelResponse,
        *,
        shadow: str | None = None,
    ) -> None:
        """Journal a live model call; ``shadow``: the shadow rules' verdicts on its decision
        (``swarmkit.shadow.verdict_text``), kept in its record (the loop passes it only where
        the agent has shadow rules)."""
        ...

    def held_verdicts(self) -> str | None:
        """What the model call just replayed holds of shadow rules' verdicts: None when the
        call was live (its record holds them already), else its record's verdicts member, or
        ``""`` where it holds none (a journal from before keeps them in a record of their
        own; a member is never empty)."""
        ...

    def check_verdicts(self, data: str) -> None:
        """The verdicts the current code judges on the model call just replayed: they must
        be those its record holds (``ReplayDivergenceError`` otherwise)."""
        ...

    def record_model_error(
        self, agent: str, turn: int, request: ModelRequest, error: ModelError
    ) -> None:
        """Journal a model call that failed for good."""
        ...

    async def replayed_outcome(
        self, agent: str, call: ToolCall, arguments: str | None = None
    ) -> ToolOutcome | None:
        """The journaled outcome of this tool call (run with ``arguments`` when a person
        edited the model's), or None when the tool must run."""
        ...

    def record_outcome(
        self,
        agent: str,
        call: ToolCall,
        outcome: ToolOutcome,
        decision: Decision | None = None,
        arguments: str | None = None,
    ) -> None:
        """Journal a live tool call and its outcome: the arguments it ran with, and a person's
        decision on it beside the model's proposal."""
        ...

    async def interrupt(self, pending: Mapping[str, Any]) -> Decision | None:
        """At a pause point: the decision the journal or ``resume`` holds, else None."""
        ...

    def record_decision(self, decision: Decision) -> None:
        """Journal a decision a DecisionSource gave live, so replay takes the same path."""
        ...

    async def flush(self) -> None:
        """Make pending records durable."""
        ...

    async def close(self) -> None:
        """The run ended: check the journal was used up, write what is pending, let go."""
        ...

    async def abandon(self) -> None:
        """The run was cancelled or its task torn down: write what is pending, let go."""
        ...
