"""Conversations that go on: a run started from an earlier one, and the chain of journaled turns.

The design is *linked turns*: each turn of a conversation is its own journaled session. The
first turn is the conversation's ``session_id``; later ones are ``{session_id}__turn_2``,
``__turn_3``, ... (or any id the caller gives with ``history=``). A continuing turn's
``run_started`` record names the session it continues and holds the history and active agent it
starts from, so every turn replays on its own, and the chain can be walked from either end.

Who takes a continuing turn's first step is the swarm's next-turn policy (``NextTurn``) or the
call's ``start_agent=``; the decision is journaled in the same record and replayed from it. An
agent with ``memory="own"`` gets its own earlier turns back whenever it is handed the
conversation, whatever the handoff's input filter kept (``with_own_memory``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from swarmkit.conversation import NextTurn
from swarmkit.exceptions import ConfigurationError
from swarmkit.limits import Spent
from swarmkit.messages import (
    AssistantMessage,
    Message,
    ToolMessage,
    messages_from_data,
    messages_to_data,
)
from swarmkit.result import NextTurnDecision, RunResult

History = RunResult | Sequence[Message | Mapping[str, Any]]
"""What ``swarm.run(history=...)`` takes: an earlier result, or its ``to_input()`` messages."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Continuation:
    """Where a continuing run starts: the active agent, the messages so far, the context."""

    agent: str
    """The agent that takes this turn's first step (at first, the one active at the end of
    the earlier turn; the next-turn policy may choose another)."""
    messages: tuple[Message, ...]
    """The conversation so far (no system messages)."""
    context: Mapping[str, Any] = field(default_factory=dict)
    """The earlier turn's context at its end."""
    previous_session: str | None = None
    """The session of the turn this one continues, when known."""
    decision: NextTurnDecision | None = None
    """Who the next-turn policy (or ``start_agent=``) chose, and why."""
    spent: Spent = field(default_factory=Spent)
    """What the conversation's earlier turns spent (for ``UsageLimits(per="conversation")``)."""


def continuation(history: History, agents: Collection[str], entry_agent: str) -> Continuation:
    """Where to start from ``history``: a result's final agent, or the last agent that spoke."""
    if isinstance(history, RunResult):
        return Continuation(
            agent=history.final_agent,
            messages=history.messages,
            context=dict(history.context),
            previous_session=history.session_id,
            spent=history.conversation_spent,
        )
    if isinstance(history, str | bytes) or not isinstance(history, Sequence):
        raise ConfigurationError(
            "history must be a RunResult or a list of messages (RunResult.to_input())"
        )
    messages = messages_from_data(history)
    return Continuation(agent=_last_speaker(messages, agents) or entry_agent, messages=messages)


def answered(messages: Sequence[Message], ran: Mapping[str, ToolMessage]) -> tuple[Message, ...]:
    """``messages`` with their last answer's tool calls all answered: a run cut short mid-step
    (cancelled, or crashed) can leave calls without results in its history, which no provider
    accepts in a later request. Each gets the result it journaled (``ran``, by call id), or
    is answered as not run."""
    last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
    if last is None:
        return tuple(messages)
    done = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    missing = [call for call in last.tool_calls if call.id not in done]
    return (*messages, *(ran.get(call.id) or _not_run(call.id, call.name) for call in missing))


def _not_run(call_id: str, name: str) -> ToolMessage:
    return ToolMessage(
        tool_call_id=call_id,
        name=name,
        content="not run: the turn was cancelled before this call finished",
        is_error=True,
    )


def _last_speaker(messages: Sequence[Message], agents: Collection[str]) -> str | None:
    for message in reversed(messages):
        if isinstance(message, AssistantMessage) and message.agent in agents:
            return message.agent
    return None


def choose_agent(
    start: Continuation,
    policy: NextTurn,
    *,
    entry_agent: str,
    message: str,
    context: Mapping[str, Any],
    start_agent: str | None,
) -> Continuation:
    """The continuation with the agent the next-turn policy (or ``start_agent``) chose."""
    last = start.agent
    if start_agent is not None:
        decision = NextTurnDecision(policy="start_agent", agent=start_agent, last_agent=last)
    else:
        merged = {**start.context, **context}
        decision = policy.decide(
            last_agent=last, entry_agent=entry_agent, message=message, context=merged
        )
    return replace(start, agent=decision.agent, decision=decision)


def start_data(start: Continuation) -> dict[str, Any]:
    """What a continuing turn's ``run_started`` record adds: where it came from, its history,
    and who the next-turn policy chose."""
    data: dict[str, Any] = {
        "continues": start.previous_session,
        "history": messages_to_data(start.messages),
    }
    if start.decision is not None:
        data["next_turn"] = start.decision.to_data()
    if start.spent != Spent():
        data["spent"] = start.spent.to_data()
    return data


def start_from_data(data: Mapping[str, Any]) -> Continuation | None:
    """The continuation a ``run_started`` record holds (None for a first turn)."""
    if "history" not in data:
        return None
    return Continuation(
        agent=str(data["entry_agent"]),
        messages=messages_from_data(data["history"]),
        context=dict(data.get("context") or {}),
        previous_session=data.get("continues"),
        decision=NextTurnDecision.from_data(data.get("next_turn")),
        spent=Spent.from_data(data.get("spent")),
    )


def this_turn_only(view: Sequence[Message], start: Continuation) -> tuple[Message, ...]:
    """``view`` without the messages of the conversation's earlier turns (``memory="none"``)."""
    earlier = {id(message) for message in start.messages}
    return tuple(message for message in view if id(message) not in earlier)


def with_own_memory(
    transcript: Sequence[Message], agent: str, view: tuple[Message, ...]
) -> tuple[Message, ...]:
    """``view`` with ``agent``'s own earlier turns before it: each of its messages with the
    results of its tool calls, from the whole conversation, that the view does not hold."""
    shown = {id(message) for message in view}
    own: list[Message] = []
    for at, message in enumerate(transcript):
        if not (isinstance(message, AssistantMessage) and message.agent == agent):
            continue
        group: list[Message] = [message, *_results(transcript, at, message)]
        # A call without its result (or half a group) is refused by model APIs: whole or none.
        complete = len(group) == 1 + len(message.tool_calls)
        if complete and not any(id(item) in shown for item in group):
            own.extend(group)
    return (*own, *view)


def _results(
    transcript: Sequence[Message], at: int, message: AssistantMessage
) -> list[ToolMessage]:
    """The tool results that follow the message at ``at`` and answer its calls."""
    ids = {call.id for call in message.tool_calls}
    results: list[ToolMessage] = []
    for item in transcript[at + 1 : at + 1 + len(ids)]:
        if not isinstance(item, ToolMessage) or item.tool_call_id not in ids:
            break
        results.append(item)
    return results
