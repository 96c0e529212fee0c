"""Recorded content in the GenAI conventions' JSON forms: messages, instructions, tool definitions.

Only built when content capture is on. Tool arguments and results are parsed where they hold
JSON (the conventions want objects) and pass through the redactor, so a secret key's value
never reaches a span; free text is kept as it is, with quoted secret pairs hidden.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, assert_never

from swarmkit.bounds import load_json
from swarmkit.messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from swarmkit.models import ToolSpec
from swarmkit.redaction import Redactor


def dumps(data: Any) -> str:
    """JSON text for a span attribute (spans take no structured values here)."""
    return json.dumps(data, ensure_ascii=False, default=_plain)


def _plain(value: object) -> Any:
    return dict(value) if isinstance(value, Mapping) else str(value)


def system_instructions(messages: Iterable[Message], redactor: Redactor) -> str | None:
    """``gen_ai.system_instructions``: the request's system messages as text parts."""
    parts = [
        {"type": "text", "content": redactor.in_text(m.content)}
        for m in messages
        if isinstance(m, SystemMessage) and m.content
    ]
    return dumps(parts) if parts else None


def input_messages(messages: Iterable[Message], redactor: Redactor) -> str:
    """``gen_ai.input.messages``: the chat history sent, in order, system messages left out
    (they are the system instructions)."""
    shown = [_message(m, redactor) for m in messages if not isinstance(m, SystemMessage)]
    return dumps(shown)


def _message(message: Message, redactor: Redactor) -> dict[str, Any]:
    match message:
        case UserMessage():
            return {"role": "user", "parts": [_text(message.content, redactor)]}
        case AssistantMessage():
            parts = [_text(message.content, redactor)] if message.content else []
            parts += [
                {
                    "type": "tool_call",
                    "id": call.id,
                    "name": call.name,
                    "arguments": structured(call.arguments, redactor),
                }
                for call in message.tool_calls
            ]
            return {"role": "assistant", "parts": parts}
        case ToolMessage():
            response = {
                "type": "tool_call_response",
                "id": message.tool_call_id,
                "result": structured(message.content, redactor),
            }
            return {"role": "tool", "parts": [response]}
        case SystemMessage():
            return {"role": "system", "parts": [_text(message.content, redactor)]}
        case _:
            assert_never(message)


def _text(content: str, redactor: Redactor) -> dict[str, Any]:
    return {"type": "text", "content": redactor.in_text(content)}


def structured(text: str, redactor: Redactor) -> Any:
    """Tool arguments or a result: the JSON object or array it holds, secrets redacted; other
    text as it is (with quoted secret pairs hidden)."""
    if text.lstrip().startswith(("{", "[")):
        try:
            return redactor.value(load_json(text), json_strings=True)
        except ValueError:
            pass
    return redactor.in_text(text)


def recorded(text: str, redactor: Redactor) -> str:
    """Tool arguments or a result as a span attribute: JSON with secrets redacted, or the
    text itself when it holds no JSON."""
    value = structured(text, redactor)
    return value if isinstance(value, str) else dumps(value)


def tool_definitions(tools: Iterable[ToolSpec]) -> str | None:
    """``gen_ai.tool.definitions``: the tools offered, as function definitions."""
    definitions = [
        {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        }
        for tool in tools
    ]
    return dumps(definitions) if definitions else None


def output_messages(text: str, finish_reason: str | None) -> str:
    """``gen_ai.output.messages``: the answer's text as the one assistant message."""
    message = {
        "role": "assistant",
        "parts": [{"type": "text", "content": text}],
        "finish_reason": finish_reason or "stop",
    }
    return dumps([message])
