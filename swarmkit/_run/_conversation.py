"""Conversations that go on: a run started from an earlier one, and the chain of journaled turns.

The design is *linked turns*: each turn of a conversation is its own journaled session. The
first turn is the conversation's ``session_id``; later ones are ``{session_id}__turn_2``,
``__turn_3``, ... (or any id the caller gives with ``history=``). A continuing turn's
``run_started`` record names the session it continues and holds the history and active agent it
starts from, so every turn replays on its own, and the chain can be walked from either end.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from swarmkit.exceptions import ConfigurationError
from swarmkit.messages import AssistantMessage, Message, messages_from_data, messages_to_data
from swarmkit.result import RunResult

History = RunResult | Sequence[Message | Mapping[str, Any]]
"""What ``swarm.run(history=...)`` takes: an earlier result, or its ``to_input()`` messages."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Continuation:
    """Where a continuing run starts: the active agent, the messages so far, the context."""

    agent: str
    """The agent that was active at the end of the earlier turn."""
    messages: tuple[Message, ...]
    """The conversation so far (no system messages)."""
    context: Mapping[str, Any] = field(default_factory=dict)
    """The earlier turn's context at its end."""
    previous_session: str | None = None
    """The session of the turn this one continues, when known."""


def continuation(history: History, agents: Collection[str], entry_agent: str) -> Continuation:
    """Where to start from ``history``: a result's final agent, or the last agent that spoke."""
    if isinstance(history, RunResult):
        return Continuation(
            agent=history.final_agent,
            messages=history.messages,
            context=dict(history.context),
            previous_session=history.session_id,
        )
    if isinstance(history, str | bytes) or not isinstance(history, Sequence):
        raise ConfigurationError(
            "history must be a RunResult or a list of messages (RunResult.to_input())"
        )
    messages = messages_from_data(history)
    return Continuation(agent=_last_speaker(messages, agents) or entry_agent, messages=messages)


def _last_speaker(messages: Sequence[Message], agents: Collection[str]) -> str | None:
    for message in reversed(messages):
        if isinstance(message, AssistantMessage) and message.agent in agents:
            return message.agent
    return None


def start_data(start: Continuation) -> dict[str, Any]:
    """What a continuing turn's ``run_started`` record adds: where it came from, its history."""
    return {"continues": start.previous_session, "history": messages_to_data(start.messages)}


def start_from_data(data: Mapping[str, Any]) -> Continuation | None:
    """The continuation a ``run_started`` record holds (None for a first turn)."""
    if "history" not in data:
        return None
    return Continuation(
        agent=str(data["entry_agent"]),
        messages=messages_from_data(data["history"]),
        context=dict(data.get("context") or {}),
        previous_session=data.get("continues"),
    )
