"""What changes during one run, and the result, journal data and rule state derived from it."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field, fields
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel

from swarmkit._run._conversation import Continuation
from swarmkit.context import RunContext
from swarmkit.handoffs import HandoffRequest
from swarmkit.interrupts import PendingDecision
from swarmkit.limits import LimitBreach, Spend, Spent
from swarmkit.messages import Message, ToolCall
from swarmkit.models import Usage
from swarmkit.result import DecidedBy, Failure, HandoffRecord, RuleDecision, RunResult, StopReason

RESERVED_KEY = "swarm"
"""The context key under which rules see the loop's facts (``swarm.agent``, ...)."""


class Interrupted(Exception):
    """Internal: the run pauses for a human at ``pending``."""

    def __init__(self, pending: PendingDecision) -> None:
        self.pending = pending


class StopRun(Exception):
    """Internal: a limit's "stop" policy ends the run with ``reason``."""

    def __init__(self, reason: StopReason) -> None:
        self.reason = reason


@dataclass(kw_only=True, slots=True)
class RunState:
    """Everything that changes during one run; the Swarm itself holds none of it."""

    session_id: str
    """The run's session id."""
    prompt: str
    """The user's prompt."""
    context: dict[str, Any]
    """The caller's context plus every tool update."""
    agent: str
    """The active agent."""
    transcript: list[Message] = field(default_factory=list)
    """Every message of the run, in order."""
    view: tuple[Message, ...] = ()
    """What the active agent was given when it started (filtered history)."""
    own_items: list[Message] = field(default_factory=list)
    """What the active agent added since it started."""
    trail: list[str] = field(default_factory=list)
    """Agents in the order they became active."""
    handoffs: list[HandoffRecord] = field(default_factory=list)
    """Performed handoffs."""
    rules: list[RuleDecision] = field(default_factory=list)
    """Rules that fired."""
    refusals: list[str] = field(default_factory=list)
    """Why each refused handoff was refused."""
    usage: dict[str, Usage] = field(default_factory=dict)
    """Tokens per agent."""
    turns: int = 0
    """Model calls made."""
    used_by_agent: Counter[str] = field(default_factory=Counter)
    """Handoffs each agent made (for handoff budgets)."""
    visits: Counter[str] = field(default_factory=Counter)
    """Times each agent became active (for cycles and max_revisits)."""
    payload: BaseModel | None = None
    """The payload of the handoff that brought the active agent in."""
    handoff_message: str | None = None
    """The message of that handoff."""
    previous_agent: str | None = None
    """The agent that handed off to the active one."""
    last_tool: str | None = None
    """The last function tool that ran."""
    last_tool_ok: bool | None = None
    """Whether it succeeded."""
    last_tool_output: str | None = None
    """What it returned, as the model saw it (input mappings read it)."""
    last_text: str | None = None
    """The last text any agent said (the output when a limit stops the run)."""
    limited_handoffs: bool = False
    """Whether max_handoffs withheld or refused a handoff."""
    limited_turns: bool = False
    """Whether max_turns shaped a call or stopped the run."""
    cycle: bool = False
    """Whether a handoff was refused for closing a cycle."""
    deps: Any = None
    """The caller's Python objects for tools and instructions; never journaled."""
    limit: LimitBreach | None = None
    """The time or usage limit that ended (or shaped the end of) the run."""
    tool_calls: int = 0
    """Function tool calls made (for max_tool_calls)."""
    spend: Spend = field(default_factory=Spend)
    """Model and tool calls counted against the usage limits, with the sub-runs' (a sub-run's
    is chained to its parent's)."""
    cost: float | None = None
    """The cost so far, when the usage limits price calls."""
    run_started_at: float = 0.0
    """When this run (or this resumed part of it) started, on the run's clock."""
    agent_started_at: float = 0.0
    """When the active agent started, on the run's clock."""
    withheld: frozenset[str] = frozenset()
    """Tools the last request did not offer because their ``available_when`` was false."""
    withheld_targets: frozenset[str] = frozenset()
    """Peers the last request offered no transfer to because of ``available_when``."""
    output_expected: bool = False
    """Whether the agent that answered last has an ``output_type``."""
    output_value: Any = None
    """Its answer validated into that type, once it validated."""
    output_retries: int = 0
    """Typed answers sent back for not validating."""
    tool_choice: str | None = None
    """The tool_choice of the latest model request (None when it offered no tools)."""
    reminded: bool = False
    """Whether a model was told it had to call a tool after answering in text (once a run)."""
    truncated: bool = False
    """Whether the final answer was cut by the output limit (finish reason ``length``)."""
    start: Continuation | None = None
    """For a run that continues a conversation: where it started from."""

    @property
    def handoff_count(self) -> int:
        """Handoffs performed so far."""
        return len(self.handoffs)

    def append(self, message: Message) -> None:
        """Add a message of the active agent to the run."""
        self.transcript.append(message)
        self.own_items.append(message)


@dataclass(frozen=True, kw_only=True, slots=True)
class Candidate:
    """A handoff asked for in one turn, in call order."""

    call: ToolCall
    """The tool call that asked for it."""
    decided_by: DecidedBy
    """The model (a transfer call) or a tool (its goto)."""
    request: HandoffRequest | None = None
    """For a tool's goto, the request already validated."""
    tool_content: str | None = None
    """For a tool's goto, the tool's own output."""


def rule_state(state: RunState) -> dict[str, Any]:
    """What conditions see: the context, and the loop's facts under ``swarm``."""
    facts = {
        "agent": state.agent,
        "previous_agent": state.previous_agent,
        "handoff_count": state.handoff_count,
        "turn": state.turns,
        "last_tool": state.last_tool,
        "last_tool_ok": state.last_tool_ok,
        "payload": state.payload.model_dump(mode="json") if state.payload else None,
        "message": state.handoff_message,
    }
    return {**state.context, RESERVED_KEY: facts}


def run_context(state: RunState, *, idempotency_key: str | None = None) -> RunContext:
    """What tools and instruction functions see of the run."""
    return RunContext(
        context=MappingProxyType(state.context),
        agent=state.agent,
        session_id=state.session_id,
        payload=state.payload,
        handoff_count=state.handoff_count,
        deps=state.deps,
        idempotency_key=idempotency_key,
    )


def finish_reason(state: RunState) -> StopReason:
    """Why a run that ended with an answer stopped: a limit that shaped it, or none."""
    if state.limit is not None:
        return state.limit.stop_reason
    if state.limited_turns:
        return "max_turns"
    if state.cycle:
        return "cycle"
    if state.limited_handoffs:
        return "max_handoffs"
    return "final_output"


def build_result(
    state: RunState,
    reason: StopReason,
    error: BaseException | None,
    pending: PendingDecision | None,
) -> RunResult:
    """The run's result."""
    spent = Spent(
        model_calls=state.turns,
        tool_calls=state.tool_calls,
        usage=sum(state.usage.values(), Usage()),
        cost=state.cost or 0.0,
        handoffs=len(state.handoffs),
        visits=dict(state.visits),
    )
    earlier = state.start.spent if state.start is not None else Spent()
    return RunResult(
        final_output=state.output_value if state.output_expected else state.last_text,
        final_output_text=state.last_text,
        truncated=state.truncated,
        final_agent=state.agent,
        stop_reason=reason,
        trail=tuple(state.trail),
        handoffs=tuple(state.handoffs),
        rule_decisions=tuple(state.rules),
        usage=dict(state.usage),
        messages=tuple(state.transcript),
        session_id=state.session_id,
        turns=state.turns,
        context=dict(state.context),
        error=error,
        failure=None if error is None else Failure.of(error),
        refusals=tuple(state.refusals),
        pending=pending,
        limit=state.limit,
        cost=state.cost,
        next_turn=state.start.decision if state.start else None,
        conversation_spent=earlier + spent,
    )


def finished_data(result: RunResult) -> dict[str, Any]:
    """The journal data of a run's end (a typed answer as its JSON, beside the raw text)."""
    typed = isinstance(result.final_output, BaseModel)
    data = {
        "stop_reason": result.stop_reason,
        "final_output": result.final_output.model_dump(mode="json")
        if typed
        else result.final_output,
        "final_agent": result.final_agent,
        "trail": list(result.trail),
        "turns": result.turns,
        "error": repr(result.error) if result.error else None,
        "pending": asdict(result.pending) if result.pending else None,
        # Only when set, so journals written before limits existed still replay.
        **({"limit": result.limit.to_data()} if result.limit else {}),
    }
    if typed or (result.final_output is None and result.stop_reason == "invalid_output"):
        data["final_output_text"] = result.final_output_text
    if result.truncated:
        data["truncated"] = True
    return data


def record_data(record: HandoffRecord) -> dict[str, Any]:
    """A frozen record as journal data, shallowly (its values are JSON-safe already)."""
    return {f.name: getattr(record, f.name) for f in fields(record)}
