"""AG-UI events in their wire form: the JSON objects the protocol sends, built directly."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeAlias

from pydantic_core import to_jsonable_python

from swarmkit.messages import Reasoning
from swarmkit.result import RunResult

Wire: TypeAlias = dict[str, Any]
"""One AG-UI event as JSON data: camelCase keys, absent fields left out."""

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


def interrupt(result: RunResult, tool_call_id: str | None) -> Wire:
    """The interrupt a paused run finishes with: its id is the paused session's."""
    pending = result.pending
    assert pending is not None
    about = pending.target or pending.tool_name or pending.agent
    wire: Wire = {
        "id": result.session_id,
        "reason": pending.kind,
        "message": f"approve, reject or edit the {pending.kind} {about}",
        "responseSchema": DECISION_SCHEMA,
        "metadata": {"pending": to_jsonable_python(pending)},
    }
    if tool_call_id is not None:
        wire["toolCallId"] = tool_call_id
    return wire
