"""AG-UI events in their wire form: the JSON objects the protocol sends, built directly."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol, TypeAlias, TypeVar

from ag_ui.core import PROTOCOL_VERSION
from pydantic_core import to_jsonable_python

from swarmkit.agui._usage import UsageTally
from swarmkit.messages import Reasoning
from swarmkit.redaction import Redactor
from swarmkit.result import RunResult

Wire: TypeAlias = dict[str, Any]
"""One AG-UI event as JSON data: camelCase keys, absent fields left out."""

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {"enum": ["approve", "reject", "edit"]},
        "reason": {"type": "string"},
        "payload": {"type": "object"},
    },
    "required": ["decision"],
}
"""The JSON schema of a resume entry's payload that decides a paused run."""


def tool_call(call_id: str, name: str, arguments: str) -> Iterator[Wire]:
    """A tool call as AG-UI streams one: start, its arguments in one delta, end."""
    yield {"type": "TOOL_CALL_START", "toolCallId": call_id, "toolCallName": name}
    yield {"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": arguments}
    yield {"type": "TOOL_CALL_END", "toolCallId": call_id}


def reasoning_events(reasoning: Reasoning, new_id: Callable[[], str]) -> Iterator[Wire]:
    """A model call's reasoning as one span: a reasoning message per readable piece, then
    each encrypted artefact as an opaque value on the span's last message (an empty message
    holds them when the provider showed nothing readable)."""
    span = new_id()
    yield {"type": "REASONING_START", "messageId": span}
    message = ""
    for text in reasoning.texts or ("",):
        message = new_id()
        yield {"type": "REASONING_MESSAGE_START", "messageId": message, "role": "reasoning"}
        if text:
            yield {"type": "REASONING_MESSAGE_CONTENT", "messageId": message, "delta": text}
        yield {"type": "REASONING_MESSAGE_END", "messageId": message}
    for value in reasoning.encrypted:
        yield {
            "type": "REASONING_ENCRYPTED_VALUE",
            "subtype": "message",
            "entityId": message,
            "encryptedValue": value,
        }
    yield {"type": "REASONING_END", "messageId": span}


def interrupt(result: RunResult, tool_call_id: str | None, redactor: Redactor) -> Wire:
    """The interrupt a paused run finishes with: its id is the paused session's; secret
    values of what it asks about hidden."""
    pending = result.pending
    assert pending is not None
    about = pending.target or pending.tool_name or pending.agent
    wire: Wire = {
        "id": result.session_id,
        "reason": pending.kind,
        "message": f"approve, reject or edit the {pending.kind} {about}",
        "responseSchema": DECISION_SCHEMA,
        "metadata": {"pending": redactor.value(to_jsonable_python(pending))},
    }
    if tool_call_id is not None:
        wire["toolCallId"] = tool_call_id
    return wire


class Form(Protocol[T_co]):
    """How a translator writes the events it emits: the events of every run (its start, its
    steps, state and text) each by a method of its own, any other event from its JSON object."""

    def event(self, wire: Wire) -> T_co:
        """Any event, from its JSON object."""

    def run_started(self, thread_id: str, run_id: str, session_id: str) -> T_co:
        """RUN_STARTED."""

    def step_started(self, name: str) -> T_co:
        """STEP_STARTED."""

    def step_finished(self, name: str) -> T_co:
        """STEP_FINISHED."""

    def state(self, agent: str, trail: Sequence[str]) -> T_co:
        """STATE_SNAPSHOT of a step: the agent and the trail so far."""

    def final_state(self, agent: str, trail: Sequence[str], context: Mapping[str, Any]) -> T_co:
        """STATE_SNAPSHOT at the run's end: the agent, the trail and the context."""

    def text_start(self, message_id: str, agent: str) -> T_co:
        """TEXT_MESSAGE_START of an assistant message."""

    def text(self, message_id: str, delta: str) -> T_co:
        """TEXT_MESSAGE_CONTENT."""

    def text_end(self, message_id: str) -> T_co:
        """TEXT_MESSAGE_END."""

    def run_finished(self, thread_id: str, run_id: str, result: str, usage: UsageTally) -> T_co:
        """RUN_FINISHED of a run that succeeded with a text (``usage``: what its calls used)."""


class Objects:
    """Events as JSON objects (``Wire``)."""

    def event(self, wire: Wire) -> Wire:
        return wire

    def run_started(self, thread_id: str, run_id: str, session_id: str) -> Wire:
        return {
            "type": "RUN_STARTED",
            "threadId": thread_id,
            "runId": run_id,
            "protocolVersion": PROTOCOL_VERSION,
            "metadata": {"session_id": session_id},
        }

    def step_started(self, name: str) -> Wire:
        return {"type": "STEP_STARTED", "stepName": name}

    def step_finished(self, name: str) -> Wire:
        return {"type": "STEP_FINISHED", "stepName": name}

    def state(self, agent: str, trail: Sequence[str]) -> Wire:
        return {"type": "STATE_SNAPSHOT", "snapshot": {"agent": agent, "trail": list(trail)}}

    def final_state(self, agent: str, trail: Sequence[str], context: Mapping[str, Any]) -> Wire:
        snapshot = {"agent": agent, "trail": list(trail), "context": dict(context)}
        return {"type": "STATE_SNAPSHOT", "snapshot": snapshot}

    def text_start(self, message_id: str, agent: str) -> Wire:
        return {
            "type": "TEXT_MESSAGE_START",
            "messageId": message_id,
            "role": "assistant",
            "name": agent,
        }

    def text(self, message_id: str, delta: str) -> Wire:
        return {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": delta}

    def text_end(self, message_id: str) -> Wire:
        return {"type": "TEXT_MESSAGE_END", "messageId": message_id}

    def run_finished(self, thread_id: str, run_id: str, result: str, usage: UsageTally) -> Wire:
        ended: Wire = {
            "type": "RUN_FINISHED",
            "threadId": thread_id,
            "runId": run_id,
            "result": result,
            "outcome": {"type": "success"},
        }
        entries = usage.entries()
        if entries is not None:
            ended["usage"] = entries
        return ended


OBJECTS = Objects()
"""The JSON-object form (what ``ag_ui_events`` yields)."""
