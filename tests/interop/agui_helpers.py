"""Helpers for the AG-UI tests: events checked against ag-ui-protocol's own models."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

from ag_ui.core import BaseEvent, Event, EventType
from pydantic import TypeAdapter


@functools.cache
def _events() -> TypeAdapter[Any]:
    return TypeAdapter(Event)


def validated(wire: str) -> BaseEvent:
    """One event's JSON as an AG-UI front end reads it, validated by the protocol's models: it
    parses, and it holds exactly what the model holds (no key the schema does not know, no
    field sent as null)."""
    event: BaseEvent = _events().validate_json(wire)
    assert json.loads(event.model_dump_json(by_alias=True, exclude_none=True)) == json.loads(wire)
    return event


def wire_events(events: Sequence[dict[str, Any]]) -> list[BaseEvent]:
    """Events as ``ag_ui_events`` yields them, sent as JSON and read back by the models."""
    return [validated(json.dumps(event)) for event in events]


def sse_events(body: str) -> list[BaseEvent]:
    """The events of an SSE body, each validated."""
    lines = [line for line in body.splitlines() if line.startswith("data: ")]
    return [validated(line.removeprefix("data: ")) for line in lines]


def check_sequence(events: Sequence[BaseEvent]) -> None:
    """The ordering rules a front end relies on: one run, started first and ended last; text
    messages and tool calls open before they grow and close once; steps balanced (one at a
    time in the run and in each sub-run)."""
    kinds = [e.type for e in events]
    assert kinds[0] == EventType.RUN_STARTED
    assert kinds[-1] in (EventType.RUN_FINISHED, EventType.RUN_ERROR)
    assert kinds.count(EventType.RUN_STARTED) == 1
    open_messages: set[str] = set()
    open_calls: set[str] = set()
    open_steps: dict[str | None, list[str]] = {}
    for event in events:
        data: dict[str, Any] = json.loads(event.model_dump_json(by_alias=True))
        steps = open_steps.setdefault(data.get("subagentRunId"), [])
        match event.type:
            case EventType.TEXT_MESSAGE_START:
                assert data["messageId"] not in open_messages
                open_messages.add(data["messageId"])
            case EventType.TEXT_MESSAGE_CONTENT:
                assert data["messageId"] in open_messages
            case EventType.TEXT_MESSAGE_END:
                open_messages.remove(data["messageId"])
            case EventType.TOOL_CALL_START:
                open_calls.add(data["toolCallId"])
            case EventType.TOOL_CALL_ARGS:
                assert data["toolCallId"] in open_calls
            case EventType.TOOL_CALL_END:
                open_calls.remove(data["toolCallId"])
            case EventType.STEP_STARTED:
                assert not steps
                steps.append(data["stepName"])
            case EventType.STEP_FINISHED:
                assert steps.pop() == data["stepName"]
            case _:
                pass
    assert not open_messages and not open_calls and not any(open_steps.values())
