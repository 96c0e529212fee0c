"""How model responses, tool outcomes and requests become journal data, and come back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

from swarmkit.context import json_safe
from swarmkit.filters import render_history
from swarmkit.journal._records import JournalRecord, corrupt_record
from swarmkit.messages import AssistantMessage, ProviderState, ToolCall
from swarmkit.models import ModelRequest, ModelResponse, Usage
from swarmkit.tools import ToolOutcome, outcome_from_data

UNCOMPARED_KEYS = frozenset({"sub_session_id", "session_id", "fingerprint", "detail", "trace"})
"""Keys replay does not compare: session names (a fork has its own), the configuration
fingerprint (a changed configuration that matters changes a model request's digest, whose
divergence shows a readable diff of what changed), a refusal's explanation (journals from
before it was kept lack it; the refusal's reason is compared) and the trace a run's end was
recorded in (each run of a session has its own)."""

_SUMMARY_TAIL = 3


def response_to_data(response: ModelResponse) -> dict[str, Any]:
    """A model response as journal data; provider state, when there is some, verbatim."""
    message = response.message
    data = {
        "content": message.content,
        "tool_calls": [_call_data(c) for c in message.tool_calls],
        "usage": _usage_data(response.usage),
        "finish_reason": response.finish_reason,
        "model": response.model,
    }
    if message.provider_state is not None:
        data["provider_state"] = _state_data(message.provider_state)
    if response.id is not None:  # written only when known, so older records read as before
        data["id"] = response.id
    return data


def _call_data(call: ToolCall) -> dict[str, Any]:
    data: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": call.arguments}
    if call.provider_state is not None:
        data["provider_state"] = _state_data(call.provider_state)
    return data


def _state_data(state: ProviderState) -> dict[str, Any]:
    return {"provider": state.provider, "data": json_safe(state.data)}


def _state_of(data: Any) -> ProviderState | None:
    if data is None:
        return None
    if not _is_mapping(data) or type(data.get("provider")) is not str:
        raise ValueError("provider_state must be an object naming its provider")
    if not _is_mapping(data.get("data")):
        raise ValueError("provider_state.data must be an object")
    return ProviderState(provider=data["provider"], data=data["data"])


def _usage_data(usage: Usage) -> dict[str, Any]:
    data: dict[str, Any] = {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
    }
    if not usage.reported:
        data["reported"] = False
    # Written only when there are some, so a record without them reads as before.
    if usage.cache_read_tokens:
        data["cache_read_tokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        data["cache_write_tokens"] = usage.cache_write_tokens
    return data


def response_from_data(data: Mapping[str, Any], agent: str | None = None) -> ModelResponse:
    """A model response read back from journal data (its message said by ``agent``)."""
    calls = tuple(
        [
            ToolCall(
                id=c["id"],
                name=c["name"],
                arguments=c["arguments"],
                provider_state=None
                if "provider_state" not in c
                else _state_of(c["provider_state"]),
            )
            for c in data["tool_calls"]
        ]
    )
    message = AssistantMessage(
        content=data["content"],
        tool_calls=calls,
        agent=agent,
        provider_state=_state_of(data["provider_state"]) if "provider_state" in data else None,
    )
    return ModelResponse(
        message=message,
        usage=_usage_of(data["usage"]),
        finish_reason=data["finish_reason"],
        model=data["model"],
        id=_text_or_none(data.get("id")),
    )


def _usage_of(data: Mapping[str, Any]) -> Usage:
    """Usage read back; the common counts (three of them, nothing else) are shared values, as
    a long session's calls mostly report the same few."""
    if len(data) != len(_PLAIN_USAGE) or data.keys() != _PLAIN_USAGE:
        return Usage(**data)
    key = (data["prompt_tokens"], data["completion_tokens"], data["total_tokens"])
    if not (type(key[0]) is int and type(key[1]) is int and type(key[2]) is int):
        return Usage(**data)  # kept as given (1.0 would find the Usage of 1)
    known = _USAGES.get(key)
    if known is None:
        if len(_USAGES) >= _USAGES_KEPT:
            _USAGES.clear()
        known = _USAGES[key] = Usage(**data)
    return known


_PLAIN_USAGE = frozenset({"prompt_tokens", "completion_tokens", "total_tokens"})
_USAGES: dict[tuple[Any, ...], Usage] = {}
_USAGES_KEPT = 256


def response_of(record: JournalRecord) -> ModelResponse:
    """The response a ``model_call`` record holds, its message said by the record's agent;
    ``JournalError`` naming the record if malformed."""
    data = record.data.get("response")
    try:
        _check_response(data)
        agent = record.data.get("agent")
        return response_from_data(data, agent if isinstance(agent, str) else None)  # type: ignore[arg-type]
    except (KeyError, TypeError, ValueError) as exc:
        detail = f"its response is malformed ({type(exc).__name__}: {exc})"
        raise corrupt_record(record.session_id, record.seq, record.kind, detail) from exc


def outcome_of(record: JournalRecord) -> ToolOutcome:
    """The outcome a ``tool_call`` record holds; ``JournalError`` naming it if malformed."""
    data = record.data.get("outcome")
    try:
        if not (type(data) is dict or _is_mapping(data)) or not isinstance(
            data.get("content"), str
        ):
            raise ValueError("an outcome is an object with text content")
        if type(data.get("is_error")) is not bool:
            raise ValueError("is_error must be true or false")
        return outcome_from_data(data)
    except (KeyError, TypeError, ValueError) as exc:
        detail = f"its outcome is malformed ({type(exc).__name__}: {exc})"
        raise corrupt_record(record.session_id, record.seq, record.kind, detail) from exc


_USAGE_COUNTS = (
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
)


def _check_response(data: object) -> None:
    """Raise ValueError unless ``data`` has the shape ``response_to_data`` writes."""
    # Exact-type tests first (what JSON decodes to), the general ones only for anything else:
    # every replayed step checks one response.
    if type(data) is not dict and not _is_mapping(data):
        raise ValueError("a response is an object")
    content = data["content"]
    if content is not None and type(content) is not str and not _is_text_or_none(content):
        raise ValueError("content must be text or null")
    if type(data["tool_calls"]) is not list and not isinstance(data["tool_calls"], list):
        raise ValueError("tool_calls must be a list")
    for call in data["tool_calls"]:
        for key in ("id", "name", "arguments"):
            if type(call[key]) is not str and not isinstance(call[key], str):
                raise ValueError("a tool call's id, name and arguments must be text")
    usage = data["usage"]
    if type(usage) is not dict and not _is_mapping(usage):
        raise ValueError("usage must map token counts to integers")
    for key in _USAGE_COUNTS:
        if type(usage.get(key, 0)) is not int:
            raise ValueError("usage must map token counts to integers")
    if type(usage.get("reported", True)) is not bool:
        raise ValueError("usage.reported must be true or false")
    finish_reason, model = data["finish_reason"], data["model"]
    if not (
        (type(finish_reason) is str or _is_text_or_none(finish_reason))
        and (type(model) is str or _is_text_or_none(model))
    ):
        raise ValueError("finish_reason and model must be text or null")


def _is_mapping(value: object) -> TypeGuard[Mapping[str, Any]]:
    return type(value) is dict or isinstance(value, Mapping)


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _is_text_or_none(value: object) -> bool:
    return value is None or type(value) is str or isinstance(value, str)


def request_summary(request: ModelRequest) -> dict[str, Any]:
    """What a person needs when a replayed request differs: instructions, tools, latest turns."""
    system = request.messages[0].content if request.messages else ""
    return {
        "instructions": system,
        "tools": [spec.name for spec in request.tools],
        "messages": len(request.messages),
        "latest": render_history(request.messages[-_SUMMARY_TAIL:]),
    }
