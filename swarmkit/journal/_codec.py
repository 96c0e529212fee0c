"""How model responses, tool outcomes and requests become journal data, and come back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic_core import to_jsonable_python

from swarmkit.filters import render_history
from swarmkit.messages import AssistantMessage, ToolCall
from swarmkit.models import ModelRequest, ModelResponse, Usage
from swarmkit.tools import ToolOutcome, ToolResult

UNCOMPARED_KEYS = frozenset({"sub_session_id", "session_id", "fingerprint"})
"""Keys replay does not compare: session names (a fork has its own) and the configuration
fingerprint (a changed configuration that matters changes a model request's digest, whose
divergence shows a readable diff of what changed)."""

_SUMMARY_TAIL = 3


def json_safe(value: Any) -> Any:
    """``value`` as JSON-safe data; what JSON cannot hold is written as its str()."""
    return to_jsonable_python(value, fallback=str)


def response_to_data(response: ModelResponse) -> dict[str, Any]:
    """A model response as journal data."""
    message = response.message
    return {
        "content": message.content,
        "tool_calls": [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls
        ],
        "usage": _usage_data(response.usage),
        "finish_reason": response.finish_reason,
        "model": response.model,
    }


def _usage_data(usage: Usage) -> dict[str, Any]:
    data: dict[str, Any] = {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
    }
    if not usage.reported:
        data["reported"] = False
    return data


def response_from_data(data: Mapping[str, Any]) -> ModelResponse:
    """A model response read back from journal data."""
    calls = tuple(
        ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"]) for c in data["tool_calls"]
    )
    return ModelResponse(
        message=AssistantMessage(content=data["content"], tool_calls=calls),
        usage=Usage(**data["usage"]),
        finish_reason=data["finish_reason"],
        model=data["model"],
    )


def outcome_to_data(outcome: ToolOutcome) -> dict[str, Any]:
    """A tool outcome as journal data (the context update and goto included)."""
    result = outcome.result
    return {
        "content": outcome.content,
        "is_error": outcome.is_error,
        "update": json_safe(dict(result.update)) if result else {},
        "goto": result.goto if result else None,
        "payload": json_safe(dict(result.payload)) if result and result.payload else None,
    }


def outcome_from_data(data: Mapping[str, Any]) -> ToolOutcome:
    """A tool outcome read back from journal data."""
    result = None
    if not data["is_error"]:
        result = ToolResult(
            output=data["content"],
            update=data.get("update") or {},
            goto=data.get("goto"),
            payload=data.get("payload"),
        )
    return ToolOutcome(content=data["content"], is_error=data["is_error"], result=result)


def request_summary(request: ModelRequest) -> dict[str, Any]:
    """What a person needs when a replayed request differs: instructions, tools, latest turns."""
    system = request.messages[0].content if request.messages else ""
    return {
        "instructions": system,
        "tools": [spec.name for spec in request.tools],
        "messages": len(request.messages),
        "latest": render_history(request.messages[-_SUMMARY_TAIL:]),
    }
