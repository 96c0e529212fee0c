"""What changes during one run, and the result, journal data and rule state derived from it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel

from swarmkit._run._conversation import Continuation
from swarmkit.context import Answer, RunContext
from swarmkit.handoffs import HandoffRequest
from swarmkit.interrupts import PendingDecision
from swarmkit.ledger import Reservation
from swarmkit.limits import LimitBreach, Spend, Spent
from swarmkit.messages import Message, ToolCall, UserMessage, message_facts
from swarmkit.models import ModelRequest, Usage
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
class Conversation:
    """The run's messages; written only through its methods."""

    transcript: list[Message] = field(default_factory=list)
    """Every message of the run, in order."""
    view: tuple[Message, ...] = ()
    """What the active agent was given when it started (filtered history)."""
    own_items: list[Message] = field(default_factory=list)
    """What the active agent added since it started."""
    last_text: str | None = None
    """The last text any agent said (the output when a limit stops the run)."""

    @classmethod
    def opening(cls, first: Message) -> Conversation:
        """A run's conversation before its first step: the user's prompt."""
        return cls(transcript=[first], view=(first,))

    def add(self, message: Message) -> None:
        """A message of the active agent (its model's, a tool result, a note to it)."""
        self.transcript.append(message)
        self.own_items.append(message)

    def say(self, text: str) -> None:
        """The text an agent said last (or a person's edit of it)."""
        self.last_text = text

    def hand_over(self, view: tuple[Message, ...]) -> None:
        """Another agent starts: it sees ``view`` and has added nothing yet."""
        self.view, self.own_items = view, []

    def amend_latest(self, count: int, change: Callable[[Message], Message]) -> None:
        """Rewrite the latest ``count`` messages (in the transcript and the agent's own)."""
        for messages in (self.transcript, self.own_items):
            for index in range(max(0, len(messages) - count), len(messages)):
                messages[index] = change(messages[index])

    def continue_from(self, earlier: Sequence[Message], *, remembers: bool) -> None:
        """A run that continues a conversation: the earlier turns' messages come first; the
        agent sees them unless it remembers nothing of earlier turns."""
        first = self.transcript[-1]
        self.transcript = [*earlier, first]
        self.view = tuple(self.transcript) if remembers else (first,)


@dataclass(kw_only=True, slots=True)
class Trail:
    """The way the run went from agent to agent; written only through its methods."""

    agents: list[str] = field(default_factory=list)
    """Agents in the order they became active."""
    handoffs: list[HandoffRecord] = field(default_factory=list)
    """Performed handoffs."""
    rules: list[RuleDecision] | None = None
    """Rules that fired (None until one does: most runs hold no empty list)."""
    refusals: list[str] | None = None
    """Why each refused handoff was refused (None until one is)."""
    used_by_agent: Counter[str] = field(default_factory=Counter)
    """Handoffs each agent made (for handoff budgets)."""
    visits: Counter[str] = field(default_factory=Counter)
    """Times each agent became active (for cycles and max_revisits)."""
    previous_agent: str | None = None
    """The agent that handed off to the active one."""
    payload: BaseModel | None = None
    """The payload of the handoff that brought the active agent in."""
    handoff_message: str | None = None
    """The message of that handoff."""

    @property
    def handoff_count(self) -> int:
        """Handoffs performed so far."""
        return len(self.handoffs)

    def enter(self, agent: str) -> None:
        """An agent becomes active."""
        self.agents.append(agent)
        self.visits[agent] += 1

    def hand_off(self, record: HandoffRecord, payload: BaseModel | None) -> None:
        """A handoff was performed (its target is entered next)."""
        self.handoffs.append(record)
        self.used_by_agent[record.source] += 1
        self.previous_agent = record.source
        self.payload, self.handoff_message = payload, record.message

    def refuse(self, detail: str) -> None:
        """A handoff was refused, for ``detail``."""
        if self.refusals is None:
            self.refusals = []
        self.refusals.append(detail)

    def follow_rule(self, decision: RuleDecision) -> None:
        """A rule fired (its handoff performed or not)."""
        if self.rules is None:
            self.rules = []
        self.rules.append(decision)


@dataclass(kw_only=True, slots=True)
class Budget:
    """What the run spent and when it started; written only by ``_budget``."""

    turns: int = 0
    """Model calls made."""
    tool_calls: int = 0
    """Function tool calls made (for max_tool_calls)."""
    usage: dict[str, Usage] = field(default_factory=dict)
    """Tokens per agent."""
    spend: Spend = field(default_factory=Spend)
    """Model and tool calls counted against the usage limits, with the sub-runs' (a sub-run's
    is chained to its parent's)."""
    cost: float | None = None
    """The cost so far, when the usage limits price calls."""
    limit: LimitBreach | None = None
    """The time or usage limit that ended (or shaped the end of) the run."""
    run_started_at: float = 0.0
    """When this run (or this resumed part of it) started, on the run's clock."""
    agent_started_at: float = 0.0
    """When the active agent started, on the run's clock."""
    reservation: Reservation | None = None
    """The spend ledger's hold for the model call under way, until it is settled."""


@dataclass(kw_only=True, slots=True)
class Limited:
    """Which of the run's caps shaped it; written only by ``_limits``."""

    handoffs: bool = False
    """Whether max_handoffs withheld or refused a handoff."""
    turns: bool = False
    """Whether max_turns shaped a call or stopped the run."""
    cycle: bool = False
    """Whether a handoff was refused for closing a cycle."""


@dataclass(kw_only=True, slots=True)
class LastTool:
    """The last function tool that ran, as rules and input mappings see it; written only by
    ``_tool_calls``."""

    name: str | None = None
    """Its name."""
    ok: bool | None = None
    """Whether it succeeded."""
    output: str | None = None
    """What it returned, as the model saw it (input mappings read it)."""


@dataclass(kw_only=True, slots=True)
class Offer:
    """What the latest model request offered; written only by ``_request``."""

    withheld: frozenset[str] = frozenset()
    """Tools it did not offer because their ``available_when`` was false."""
    withheld_targets: frozenset[str] = frozenset()
    """Peers it offered no transfer to because of ``available_when``."""
    tool_choice: str | None = None
    """Its tool_choice (None when it offered no tools)."""
    request: ModelRequest | None = None
    """The latest request (with its system message only), asked again as it is while its
    agent asks and nothing in it changes."""


@dataclass(kw_only=True, slots=True)
class Output:
    """The answer as the agent's output type takes it; written only by ``_output``."""

    expected: bool = False
    """Whether the agent that answered last has an ``output_type``."""
    value: Any = None
    """Its answer validated into that type, once it validated."""
    retries: int = 0
    """Typed answers sent back for not validating."""
    reminded: bool = False
    """Whether a model was told it had to call a tool after answering in text (once a run)."""
    truncated: bool = False
    """Whether the final answer was cut by the output limit (finish reason ``length``)."""


@dataclass(kw_only=True, slots=True)
class RunState:
    """Everything that changes during one run, as a few named records (the Swarm itself holds
    none of it). The run's identity and inputs are plain fields; ``agent`` changes at a
    handoff (``_handoff``) and ``context`` with tool updates (``_tool_calls``)."""

    session_id: str
    """The run's session id."""
    prompt: str
    """The user's prompt."""
    context: dict[str, Any]
    """The caller's context plus every tool update."""
    agent: str
    """The active agent."""
    deps: Any = None
    """The caller's Python objects for tools and instructions; never journaled."""
    start: Continuation | None = None
    """For a run that continues a conversation: where it started from."""
    conversation: Conversation = field(default_factory=Conversation)
    """The messages."""
    trail: Trail = field(default_factory=Trail)
    """Agents, handoffs, rules and refusals."""
    budget: Budget = field(default_factory=Budget)
    """Calls, tokens, cost and time spent."""
    limited: Limited = field(default_factory=Limited)
    """Which caps shaped the run."""
    last_tool: LastTool = field(default_factory=LastTool)
    """The last function tool that ran."""
    offer: Offer = field(default_factory=Offer)
    """What the latest request offered."""
    output: Output = field(default_factory=Output)
    """The typed answer."""

    @classmethod
    def opening(
        cls,
        *,
        session_id: str,
        prompt: str,
        context: dict[str, Any],
        agent: str,
        deps: Any,
        spend: Spend | None = None,
    ) -> RunState:
        """A run's state before its first step (``spend``: a sub-run's, chained to its parent's)."""
        return cls(
            session_id=session_id,
            prompt=prompt,
            context=context,
            agent=agent,
            deps=deps,
            conversation=Conversation.opening(UserMessage(content=prompt)),
            budget=Budget(spend=spend if spend is not None else Spend()),
        )

    def continue_from(self, start: Continuation, *, remembers: bool) -> None:
        """Start where an earlier run of the conversation ended: its agent, its messages, its
        context (the caller's keys win)."""
        self.agent, self.start = start.agent, start
        self.conversation.continue_from(start.messages, remembers=remembers)
        self.context = {**start.context, **self.context}

    @property
    def handoff_count(self) -> int:
        """Handoffs performed so far."""
        return len(self.trail.handoffs)


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
    """What conditions see: the context, and the loop's facts under ``swarm`` (the user's
    latest message among them: the prompt of this run, which is the new message of a
    conversation's turn)."""
    facts = {
        "agent": state.agent,
        "previous_agent": state.trail.previous_agent,
        "handoff_count": state.handoff_count,
        "turn": state.budget.turns,
        "last_tool": state.last_tool.name,
        "last_tool_ok": state.last_tool.ok,
        "payload": state.trail.payload.model_dump(mode="json") if state.trail.payload else None,
        "message": state.trail.handoff_message,
        **message_facts(state.prompt),
    }
    return {**state.context, RESERVED_KEY: facts}


def run_context(
    state: RunState, *, idempotency_key: str | None = None, answer: Answer | None = None
) -> RunContext:
    """What tools and instruction functions see of the run (``answer``: a person's answer
    for a tool called again after it asked)."""
    return RunContext(
        context=MappingProxyType(state.context),
        agent=state.agent,
        session_id=state.session_id,
        payload=state.trail.payload,
        handoff_count=state.handoff_count,
        deps=state.deps,
        idempotency_key=idempotency_key,
        answer=answer,
    )


def finish_reason(state: RunState) -> StopReason:
    """Why a run that ended with an answer stopped: a limit that shaped it, or none."""
    if state.budget.limit is not None:
        return state.budget.limit.stop_reason
    if state.limited.turns:
        return "max_turns"
    if state.limited.cycle:
        return "cycle"
    if state.limited.handoffs:
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
        model_calls=state.budget.turns,
        tool_calls=state.budget.tool_calls,
        usage=sum(state.budget.usage.values(), Usage()),
        cost=state.budget.cost or 0.0,
        handoffs=len(state.trail.handoffs),
        visits=dict(state.trail.visits),
    )
    earlier = state.start.spent if state.start is not None else Spent()
    return RunResult(
        final_output=state.output.value if state.output.expected else state.conversation.last_text,
        final_output_text=state.conversation.last_text,
        truncated=state.output.truncated,
        final_agent=state.agent,
        stop_reason=reason,
        trail=tuple(state.trail.agents),
        handoffs=tuple(state.trail.handoffs),
        rule_decisions=tuple(state.trail.rules or ()),
        usage=dict(state.budget.usage),
        messages=tuple(state.conversation.transcript),
        session_id=state.session_id,
        turns=state.budget.turns,
        context=dict(state.context),
        error=error,
        failure=None if error is None else Failure.of(error),
        refusals=tuple(state.trail.refusals or ()),
        pending=pending,
        limit=state.budget.limit,
        cost=state.budget.cost,
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
