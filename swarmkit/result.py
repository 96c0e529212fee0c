"""RunResult: how a run ended, what it answered, and every handoff and rule decision on the way."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal, get_type_hints

from pydantic import TypeAdapter
from pydantic_core import to_jsonable_python

from swarmkit.interrupts import PendingDecision
from swarmkit.limits import LimitBreach, Spent
from swarmkit.messages import Message, messages_to_data
from swarmkit.models import ModelRequest, Usage

StopReason = Literal[
    "final_output",
    "max_handoffs",
    "max_turns",
    "cycle",
    "timeout",
    "usage_limit",
    "budget",
    "interrupted",
    "error",
    "invalid_output",
]
"""Why a run stopped; a limit or a cycle is never reported as ``final_output``;
``invalid_output`` means a typed agent's answers kept failing validation; ``budget`` means a
spend ledger's budget had no room for the next model call (see ``swarmkit.ledger``)."""

DecidedBy = Literal["rule", "llm", "tool", "budget", "person"]
"""Who chose a handoff: a HandoffGraph rule, the model's transfer call, a tool's ``goto``, an
agent's spent ``handoff_budget`` continuing to its ``then`` agent, or a person handing a
conversation back from a queue of people."""


@dataclass(frozen=True, kw_only=True, slots=True)
class HandoffRecord:
    """One performed handoff."""

    source: str
    """The agent that handed off."""
    target: str
    """The agent that took over."""
    decided_by: DecidedBy
    """Whether a rule, the model, or a tool made the decision."""
    turn: int
    """The number of model calls made in the run before this handoff."""
    number: int
    """1 for the run's first handoff, 2 for the second, ..."""
    payload: Mapping[str, Any] | None = None
    """The validated payload as JSON-safe data, for typed handoffs."""
    payload_type: str | None = None
    """The payload's model name (e.g. ``RefundRequest``), for typed handoffs."""
    message: str | None = None
    """The free-text message that came with the handoff, if any."""
    condition: str | None = None
    """For rule handoffs, the condition of the edge that fired (None for an unconditional edge)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RuleDecision:
    """A HandoffGraph edge that fired for the active agent."""

    agent: str
    """The agent whose outgoing edges were evaluated."""
    target: str
    """The target of the edge that fired."""
    condition: str | None
    """The edge's condition (None for an unconditional edge)."""
    turn: int
    """Model calls made in the run before the decision."""
    performed: bool
    """Whether the handoff happened (False when a limit or a cycle refused it)."""


NextTurnPolicy = Literal["last", "entry", "rule", "start_agent"]
"""What chose the agent that answers a conversation's next message: the agent that answered
last, the entry agent, a rule of ``NextTurn``, or the call's ``start_agent=``."""


@dataclass(frozen=True, kw_only=True, slots=True)
class NextTurnDecision:
    """Who answers a new message of a conversation, and why; journaled with the turn's start."""

    policy: NextTurnPolicy
    """What decided: ``last``, ``entry``, ``rule`` or ``start_agent``."""
    agent: str
    """The agent that takes the turn's first step."""
    last_agent: str
    """The agent that was active when the conversation's previous turn ended."""
    condition: str | None = None
    """For ``rule``: the condition that held (None for the others)."""

    def to_data(self) -> dict[str, Any]:
        """The decision as journal data."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_data(cls, data: Any) -> NextTurnDecision | None:
        """The decision a ``run_started`` record holds (None when it holds none)."""
        if not isinstance(data, Mapping) or data.get("policy") not in _NEXT_TURN_POLICIES:
            return None
        condition = data.get("condition")
        return cls(
            policy=data["policy"],
            agent=str(data.get("agent")),
            last_agent=str(data.get("last_agent")),
            condition=condition if isinstance(condition, str) else None,
        )


_NEXT_TURN_POLICIES = ("last", "entry", "rule", "start_agent")


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionState:
    """A session's state after one journaled step, as ``Swarm.history`` lists it."""

    step: int
    """The journal record (seq) this state follows; ``Swarm.fork(at=step)`` starts here."""
    kind: str
    """What that record was (``model_call``, ``handoff``, ``tool_call``, ...)."""
    agent: str
    """The active agent."""
    context: Mapping[str, Any]
    """The run's context (as journaled: secrets redacted)."""
    handoff_count: int
    """Handoffs performed so far."""
    turns: int
    """Model calls made so far."""
    messages: tuple[Message, ...]
    """The conversation so far."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SentRequest:
    """What one model call of a journaled session was sent, as ``Swarm.requests`` rebuilds it."""

    seq: int
    """The journal record (seq) of the ``model_call``."""
    agent: str
    """The agent whose model was called."""
    turn: int
    """The run's model call this was (1, 2, ...)."""
    request: ModelRequest
    """The whole request (secrets redacted): the instructions (a handoff's note and payload
    included) as its first message, then every message as sent, after the input filters; the
    tools offered, each with its JSON schema; and the settings (``tool_choice``, ...)."""
    payload: Mapping[str, Any] | None = None
    """The payload of the handoff that brought the agent in, as JSON data (secrets redacted);
    None when no typed handoff did."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Failure:
    """The error that ended a run, as data that crosses a process boundary."""

    type: str
    """The exception's class name, e.g. ``ModelError``."""
    message: str
    """Its message."""

    @classmethod
    def of(cls, error: BaseException) -> Failure:
        """The failure describing ``error``."""
        return cls(type=type(error).__name__, message=str(error))


@dataclass(frozen=True, kw_only=True, slots=True)
class RunResult:
    """Everything a finished run tells: the answer, why it stopped, and how it got there."""

    final_output: Any
    """The last agent's answer: the validated value when that agent has an ``output_type``
    (None if it never validated), else its text (for a stop by a limit, the last text an
    agent produced)."""
    final_agent: str
    """The agent that was active when the run stopped."""
    stop_reason: StopReason
    """Why the run stopped."""
    trail: tuple[str, ...]
    """The agents in the order they became active, starting with the entry agent."""
    handoffs: tuple[HandoffRecord, ...]
    """Every performed handoff, in order."""
    rule_decisions: tuple[RuleDecision, ...]
    """Every rule that fired, performed or refused, in order."""
    usage: Mapping[str, Usage]
    """Token usage per agent."""
    messages: tuple[Message, ...]
    """The run's whole conversation, every agent's turns included (no system messages)."""
    session_id: str
    """The run's session id."""
    turns: int
    """Model calls made."""
    context: Mapping[str, Any] = field(default_factory=dict)
    """The run's context at the end: the caller's plus every tool update."""
    error: BaseException | None = None
    """The exception that ended a run with ``stop_reason="error"`` (in the process that ran
    it; a result read back with ``from_data`` has only ``failure``)."""
    failure: Failure | None = None
    """The type and message of that exception, as data."""
    refusals: tuple[str, ...] = ()
    """Why each refused handoff was refused, in order."""
    pending: PendingDecision | None = None
    """For ``stop_reason="interrupted"``: what the run waits for a human to decide."""
    limit: LimitBreach | None = None
    """For ``stop_reason="timeout"``, ``"usage_limit"`` or ``"budget"``: which limit, and the
    figures."""
    cost: float | None = None
    """The run's cost so far, when ``UsageLimits(cost=...)`` prices its calls."""
    final_output_text: str | None = None
    """The final answer's raw text (for a typed answer, the JSON the model wrote)."""
    truncated: bool = False
    """Whether the final answer was cut by the model's output limit (``finish_reason`` was
    ``length``, or the Responses API said ``incomplete``): it may be missing its end."""
    next_turn: NextTurnDecision | None = None
    """For a later turn of a conversation: who the next-turn policy let answer, and why."""
    conversation_spent: Spent = field(default_factory=Spent)
    """What the conversation has spent up to the end of this run: its earlier turns (when the
    run continued one) plus this run's calls, tokens and cost."""

    def to_input(self) -> list[dict[str, Any]]:
        """The conversation as plain JSON messages, for a caller who stores history elsewhere;
        ``swarm.run(prompt, history=...)`` takes them back."""
        return messages_to_data(self.messages)

    def to_data(self) -> dict[str, Any]:
        """The result as JSON-safe data; ``RunResult.from_data`` gives an equal result back.

        The exception itself stays behind: ``failure`` carries its type name and message.
        """
        data = {
            f.name: to_jsonable_python(getattr(self, f.name), fallback=str)
            for f in fields(self)
            if f.name != "error"
        }
        if self.error is not None and self.failure is None:
            data["failure"] = to_jsonable_python(Failure.of(self.error))
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> RunResult:
        """The result ``to_data`` described, validated field by field."""
        return cls(
            **{
                name: adapter.validate_python(data[name])
                for name, adapter in _field_adapters().items()
                if name in data
            }
        )

    @property
    def total_usage(self) -> Usage:
        """Token usage summed over all agents."""
        total = Usage()
        for usage in self.usage.values():
            total = total + usage
        return total


@functools.cache
def _field_adapters() -> dict[str, TypeAdapter[Any]]:
    # Built on first use: validators cost milliseconds, and most programs never need them.
    hints = get_type_hints(RunResult)
    return {f.name: TypeAdapter(hints[f.name]) for f in fields(RunResult) if f.name != "error"}
