"""The versioned events a run streams, each emitted exactly once, in order."""

from __future__ import annotations

import functools
from collections.abc import AsyncGenerator, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import Field, TypeAdapter
from pydantic_core import core_schema, to_jsonable_python

from swarmkit.messages import Reasoning
from swarmkit.models import ModelRequest, Usage
from swarmkit.result import DecidedBy, NextTurnDecision, RunResult

if TYPE_CHECKING:
    from swarmkit.lowlevel import RequestHistory

RefusalReason = Literal[
    "cycle",
    "max_handoffs",
    "budget",
    "not_taken",
    "unknown_agent",
    "self",
    "rejected",
    "payload",
    "not_offered",
    "on_handoff_failed",
]
"""Why a handoff was not performed (``payload``: a rule's mapped payload did not validate;
``not_offered``: the model asked for a transfer its ``available_when`` did not offer;
``on_handoff_failed``: the Handoff's ``on_handoff`` callback raised)."""

EVENT_VERSION = 1
"""Bumped whenever a field of any event changes meaning or disappears."""


class _InProcessOnly:
    """Marks a field held for observers in this process: never in an event's data, so reading
    data back neither validates nor builds it."""

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> core_schema.CoreSchema:
        return core_schema.none_schema()


_IN_PROCESS = _InProcessOnly()


@dataclass(frozen=True, kw_only=True, slots=True)
class RunStarted:
    """A run began."""

    session_id: str
    """The run's session id."""
    prompt: str
    """The user's prompt."""
    entry_agent: str
    """The agent that takes the first turn."""
    replay: bool = False
    """Whether the run starts by replaying a journal (replay, resume, fork)."""
    next_turn: NextTurnDecision | None = None
    """For a later turn of a conversation: who the next-turn policy chose, and why."""
    previous_trace: str | None = None
    """For a run that picks a session up (a resume, a replay): the W3C ``traceparent`` of the
    session's previous run, journaled with its end when an observer traced it (``RUN_TRACE``),
    in whichever process it ran; None when that run was not traced."""
    version: int = EVENT_VERSION
    """Event schema version."""
    kind: Literal["run_started"] = "run_started"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentStarted:
    """An agent became active: the entry agent, or the target of a handoff."""

    agent: str
    """The agent's name."""
    sub_session_id: str
    """``{session}__swarm_{agent}_{handoff_count}``: the id of this agent's turn."""
    handoff_count: int
    """Handoffs performed before this agent started."""
    provider: str | None = None
    """Who serves the agent's model (``gen_ai.provider.name``); ``_OTHER`` when it declares
    none (None only in events recorded before the field existed)."""
    description: str | None = None
    """The agent's description, when it has one."""
    model: str | None = None
    """The name of the model the agent asks (``gpt-4o``), when the model declares one."""
    version: int = EVENT_VERSION
    """Event schema version."""
    kind: Literal["agent_started"] = "agent_started"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RuleEvaluated:
    """The HandoffGraph was consulted for the active agent."""

    agent: str
    """The agent whose edges were evaluated."""
    target: str | None
    """The target of the edge that fired, or None when no edge matched."""
    condition: str | None
    """The fired edge's condition (None when unconditional or when nothing fired)."""
    audited: bool = False
    """Whether this rule decision was sampled for an audit (``Swarm(audit=RuleAudit(...))``):
    the model was asked too, and its choice is ``audit_choice``."""
    audit_choice: str | None = None
    """Where the audited model would have handed off (None: it would have kept the turn);
    the rule agrees when this is ``target``."""
    audit_replayed: bool = False
    """Whether the audit's answer was read from the journal (a replay, or the journaled steps
    of a resume) rather than asked for in this run."""
    version: int = EVENT_VERSION
    """Event schema version."""
    kind: Literal["rule_evaluated"] = "rule_evaluated"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelCallStarted:
    """The active agent's model was called."""

    agent: str
    """The agent."""
    turn: int
    """1 for the run's first model call, 2 for the second, ..."""
    model: str | None = None
    """The model's ``name`` (e.g. ``gpt-4o``), when it has one."""
    provider: str | None = None
    """The model's ``provider`` (e.g. ``openai``); ``_OTHER`` when it declares none (None only
    in events recorded before then)."""
    stream: bool = False
    """Whether the model is asked to stream its answer."""
    server_address: str | None = None
    """The host the model's API is reached at, when the model declares one."""
    server_port: int | None = None
    """The port it is reached at (443 for an https address without one)."""
    request: Annotated[ModelRequest | None, _IN_PROCESS] = field(
        default=None, compare=False, repr=False
    )
    """The request's head: its system message, tools and settings (the history is
    ``history``). Held by reference for observers in this process; not part of the event's
    data, and None in an event read back from data."""
    history: Annotated[RequestHistory | None, _IN_PROCESS] = field(
        default=None, compare=False, repr=False
    )
    """The messages the request sends after its system message, held by reference (see
    ``request``)."""
    spend: Mapping[str, Any] | None = None
    """The spend ledger's hold for this call, when the swarm has a ledger: ``reservation``
    (its id), ``estimate_tokens`` and ``budgets`` (each ``name|scope|period`` it counts in)."""
    version: int = EVENT_VERSION
    """Event schema version."""
    kind: Literal["model_call_started"] = "model_call_started"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True)
class TextDelta:
    """A piece of the active agent's answer, when the run streams."""

    agent: str
    """The agent."""
    text: str
    """The new text."""
    version: int = EVENT_VERSION
    """Event schema version."""
    kind: Literal["text_delta"] = "text_delta"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelAttemptDiscarded:
    """A streamed model call failed midway and is being retried: drop its text so far.

    Every ``TextDelta`` of this agent since its ``ModelCallStarted`` (or since the previous
    ``ModelAttemptDiscarded``) belongs to the failed attempt; the deltas that follow are the
    new attempt's, from the start of the answer. Only the deltas after the last such event
    join to the call's text.
    """

    agent: str
    """The agent."""
    turn: int
    """The model call's number in the run."""
    attempt: int
    """The failed attempt's number (1-based); the next attempt is ``attempt + 1``."""
    reason: str
    """Why it failed (``timeout_stream_gap``, ``http_503``, ``connection_error`` ...)."""
    version: int = EVENT_VERSION
    """Event schema version."""
    kind: Literal["model_attempt_discarded"] = "model_attempt_discarded"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelCallFinished:
    """The active agent's model answered."""

    agent: str
    """The agent."""
    turn: int
    """The model call's number in the run."""
    usage: Usage
    """Tokens the call used."""
    finish_reason: str | None
    """Why the model stopped."""
    response_model: str | None = None
    """The model name the answer reported."""
    response_id: str | None = None
    """The provider's id for the answer, when it gave one."""
    content: str | None = None
    """The answer's text, if any."""
    replayed: bool = False
    """Whether the answer was served from the journal (a replay, or the journaled steps of a
    resume) rather than by the model now; its ``usage`` was spent, and counted, back then."""
    reasoning: Reasoning | None = None
    """The reasoning the provider returned with the answer (thinking text, summaries, thoughts,
    and its encrypted artefacts as they came); None when it returned none."""
    version: int = EVENT_VERSION
    """Event schema version."""
    kind: Literal["model_call_finished"] = "model_call_finished"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCalled:
    """A function tool is about to run."""

    agent: str
    """The agent whose model called it."""
    tool_call_id: str
    """The call's id."""
    name: str
    """The tool's name."""
    arguments: str
    """The arguments as the model wrote them."""
    version: int = EVENT_VERSION
    """Event schema version."""
    kind: Literal["tool_called"] = "tool_called"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolResulted:
    """A tool call produced its result (or an error the model will see)."""

    agent: str
    """The agent whose model called it."""
    tool_call_id: str
    """The call's id."""
    name: str
    """The tool's name."""
    content: str
    """The result text sent back to the model."""
    is_error: bool
    """Whether the call failed."""
    arguments: str | None = None
    """The arguments the tool ran with, when a person edited the model's (``ToolCalled``
    holds the model's proposal); None when it ran as the model wrote it."""
    decision: Mapping[str, Any] | None = None
    """A person's decision on the call, as the journal keeps it (``kind``, ``decided_by``,
    ``note``, ``at``, ``edited``); None when no approval was asked."""
    version: int = EVENT_VERSION
    """Event schema version."""
    kind: Literal["tool_resulted"] = "tool_resulted"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True)
class HandoffPerformed:
    """Control passed from one agent to another."""

    source: str
    """The agent that handed off."""
    target: str
    """The agent that takes over."""
    decided_by: DecidedBy
    """A rule, the model (llm) or a tool."""
    payload: Mapping[str, Any] | None
    """The validated payload as JSON-safe data, for typed handoffs."""
    payload_type: str | None
    """The payload's model name, for typed handoffs."""
    message: str | None
    """The free-text note that came with the handoff, if any."""
    condition: str | None
    """For a rule, the fired edge's condition."""
    number: int
    """1 for the run's first handoff, 2 for the second, ..."""
    tool_name: str | None = None
    """For a handoff the model asked for: the transfer tool it called (``transfer_to_<agent>``
    unless the Handoff names it)."""
    tool_call_id: str | None = None
    """For a handoff the model asked for: the id of that call."""
    version: int = EVENT_VERSION
    """Event schema version."""
    kind: Literal["handoff"] = "handoff"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True)
class HandoffRefused:
    """A requested handoff did not happen."""

    source: str
    """The agent that asked."""
    target: str
    """The agent it asked for."""
    decided_by: DecidedBy
    """Who asked: a rule, the model or a tool."""
    reason: RefusalReason
    """Why it was refused."""
    detail: str
    """The explanation, as the model was told it."""
    version: int = EVENT_VERSION
    """Event schema version."""
    kind: Literal["handoff_refused"] = "handoff_refused"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RunFinished:
    """The run ended; always the last event."""

    result: RunResult
    """The run's result."""
    version: int = EVENT_VERSION
    """Event schema version."""
    kind: Literal["run_finished"] = "run_finished"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SubRunEvent:
    """An event of a delegated sub-run (``agent.as_tool()``), as the delegating run streams it.

    The sub-run's own events arrive wrapped, in its order; a sub-run of a sub-run arrives
    wrapped twice. Several delegations of one turn run concurrently, but their events are
    streamed one sub-run after another in the order the model called them (the first one's
    live, the others' held until the ones before are done), so a replay streams the same
    sequence. They come between the calls' ``ToolCalled`` and ``ToolResulted`` events.
    """

    session_id: str
    """The sub-run's session id (``{session}__swarm_{agent}_{handoff_count}_{tool_call_id}``)."""
    agent: str
    """The delegating agent (whose model called the delegation tool)."""
    tool_call_id: str
    """The delegating tool call's id."""
    tool_name: str
    """The delegation tool's name (``ask_<agent>`` unless named)."""
    event: Event
    """The sub-run's event."""
    version: int = EVENT_VERSION
    """Event schema version."""
    kind: Literal["sub_run"] = "sub_run"
    """Discriminator."""


Event = (
    RunStarted
    | AgentStarted
    | RuleEvaluated
    | ModelCallStarted
    | TextDelta
    | ModelAttemptDiscarded
    | ModelCallFinished
    | ToolCalled
    | ToolResulted
    | HandoffPerformed
    | HandoffRefused
    | RunFinished
    | SubRunEvent
)
"""Any event of a run."""


def event_to_data(event: Event) -> dict[str, Any]:
    """An event as JSON-safe data (with its ``kind`` and ``version``); see ``event_from_data``."""
    if isinstance(event, RunFinished):
        return {"kind": event.kind, "version": event.version, "result": event.result.to_data()}
    if isinstance(event, SubRunEvent):
        return {
            "kind": event.kind,
            "version": event.version,
            "session_id": event.session_id,
            "agent": event.agent,
            "tool_call_id": event.tool_call_id,
            "tool_name": event.tool_name,
            "event": event_to_data(event.event),
        }
    if isinstance(event, ModelCallStarted) and event.request is not None:
        # The request is for observers in this process; as data the event is what it says.
        event = replace(event, request=None, history=None)
    data: dict[str, Any] = to_jsonable_python(event)
    data.pop("request", None)
    data.pop("history", None)
    return data


def event_from_data(data: Mapping[str, Any]) -> Event:
    """The event ``event_to_data`` described; its ``kind`` says which."""
    if data.get("kind") == "run_finished":
        return RunFinished(
            result=RunResult.from_data(data["result"]),
            version=int(data.get("version", EVENT_VERSION)),
        )
    if data.get("kind") == "sub_run":
        return SubRunEvent(
            session_id=str(data["session_id"]),
            agent=str(data["agent"]),
            tool_call_id=str(data["tool_call_id"]),
            tool_name=str(data["tool_name"]),
            event=event_from_data(data["event"]),
            version=int(data.get("version", EVENT_VERSION)),
        )
    event: Event = _step_events().validate_python(data)
    return event


@functools.cache
def _step_events() -> TypeAdapter[Any]:
    # The adapter resolves the events' annotations in this frame too: the in-process fields'
    # types are named here (they are never validated, see _InProcessOnly).
    from swarmkit.lowlevel import RequestHistory  # noqa: F401, PLC0415

    steps = Annotated[
        RunStarted
        | AgentStarted
        | RuleEvaluated
        | ModelCallStarted
        | TextDelta
        | ModelCallFinished
        | ToolCalled
        | ToolResulted
        | HandoffPerformed
        | HandoffRefused,
        Field(discriminator="kind"),
    ]
    return TypeAdapter(steps)


RUN_TRACE: ContextVar[tuple[str, str] | None] = ContextVar("swarmkit_run_trace", default=None)
"""The session id and W3C ``traceparent`` of the span an observer records for the run going on
in this context (``swarmkit.tracing`` sets it). The run journals the ``traceparent`` with its
end (never compared by replay), so the session's next run, in any process, names it as its
``RunStarted.previous_trace`` and its trace can link back."""


def run_trace(session_id: str) -> str | None:
    """The ``traceparent`` an observer set for ``session_id``'s run in this context, if any."""
    current = RUN_TRACE.get()
    return current[1] if current is not None and current[0] == session_id else None


EventObserver: TypeAlias = Callable[[AsyncGenerator[Event, None]], AsyncGenerator[Event, None]]
"""Watches a run: takes its event stream and yields every event on, unchanged and in order.

``Swarm(observers=[...])`` wraps every run, stream, replay and resume in each observer (e.g.
``swarmkit.tracing.traced``). The observer's code between events runs in the run's own task,
so a context it sets (a current span) is in force for the step that follows.
"""
