"""The Responses API wire format: our requests as JSON bodies, its answers and events as records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, assert_never

from swarmkit.messages import (
    AssistantMessage,
    Message,
    ProviderState,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from swarmkit.models._base import (
    ModelDelta,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
    Usage,
)
from swarmkit.models._wire import (
    IncompleteResponseError,
    UnexpectedResponseError,
    cached_count,
    checked_count,
    checked_text,
    plain_json,
    set_only,
    tool_settings,
)
from swarmkit.models._wire_cache import MESSAGES_MARK, WireCache, json_bytes, spliced_body

_TERMINAL_EVENTS = frozenset({"response.completed", "response.incomplete"})


def request_json(model: str, request: ModelRequest, *, stream: bool = False) -> bytes:
    """The JSON body ``POST /responses`` sends for one request: ``extra_body`` merged in, each
    message's input items encoded once in its life (not once a call)."""
    body = request_body(model, request, items=MESSAGES_MARK)
    if stream:
        body = {**body, "stream": True}
    return spliced_body(body, _ITEMS_JSON.array(request.messages))


def request_body(model: str, request: ModelRequest, *, items: object = None) -> dict[str, Any]:
    """The JSON body of ``POST /responses`` for one request (``extra_body`` merged in);
    ``items`` stands in for the input items when given."""
    body: dict[str, Any] = {
        "model": model,
        "input": (
            [item for message in request.messages for item in input_items(message)]
            if items is None
            else items
        ),
    }
    if request.tools:
        body["tools"] = [function_tool(spec) for spec in request.tools]
    body.update(settings_body(request.settings, has_tools=bool(request.tools)))
    text_format = output_format(request)
    if text_format is not None:
        body["text"] = {"format": text_format}
    return {**body, **plain_json(request.settings.extra_body)}


def input_items(message: Message) -> list[dict[str, Any]]:
    """One message as input items: a tool-calling turn becomes one item per call."""
    match message:
        case SystemMessage(content=content):
            return [{"role": "system", "content": content}]
        case UserMessage(content=content):
            return [{"role": "user", "content": content}]
        case AssistantMessage(content=content, tool_calls=calls):
            said = [{"role": "assistant", "content": content}] if content else []
            return reasoning_items(message) + said + [function_call_item(call) for call in calls]
        case ToolMessage(tool_call_id=call_id, content=content):
            return [{"type": "function_call_output", "call_id": call_id, "output": content}]
        case _:
            assert_never(message)


_ITEMS_JSON = WireCache(lambda message: b",".join(map(json_bytes, input_items(message))))


PROVIDER = "openai-responses"
"""The name Responses state (reasoning items) is kept under."""


def reasoning_items(message: AssistantMessage) -> list[dict[str, Any]]:
    """The reasoning items the turn came with, verbatim (encrypted content and all), so the
    calls that follow them are accepted; none for a turn another API made."""
    state = message.provider_state
    if state is None or state.provider != PROVIDER:
        return []
    return [dict(item) for item in state.data.get("items", ())]


def reasoning_state(output: Sequence[Any]) -> ProviderState | None:
    """The reasoning items among a response's output items, as the turn's state."""
    items = [
        dict(item)
        for item in output
        if isinstance(item, Mapping) and item.get("type") == "reasoning"
    ]
    return ProviderState(provider=PROVIDER, data={"items": items}) if items else None


def function_call_item(call: ToolCall) -> dict[str, Any]:
    """A call the model made, sent back as it was made (arguments as raw text, even malformed)."""
    return {
        "type": "function_call",
        "call_id": call.id,
        "name": call.name,
        "arguments": call.arguments,
    }


def function_tool(spec: ToolSpec) -> dict[str, Any]:
    """A function tool; ``strict`` is always sent, as the API's default for it is true."""
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": plain_json(spec.parameters),
        "strict": spec.strict,
    }


def settings_body(settings: ModelSettings, *, has_tools: bool) -> dict[str, Any]:
    """The settings that are set; ``seed`` has no Responses API field and is not sent."""
    return set_only(
        {
            "temperature": settings.temperature,
            "top_p": settings.top_p,
            "max_output_tokens": settings.max_tokens,
            **(tool_settings(settings, _forced_function) if has_tools else {}),
        }
    )


def _forced_function(name: str) -> dict[str, Any]:
    return {"type": "function", "name": name}


def output_format(request: ModelRequest) -> dict[str, Any] | None:
    """The structured-output format of the request's output schema, if it has one."""
    schema = request.output_schema
    if schema is None:
        return None
    return {
        "type": "json_schema",
        "name": schema.name,
        "schema": plain_json(schema.schema),
        "strict": schema.strict,
    }


def parse_response(data: Mapping[str, Any]) -> ModelResponse:
    """A complete response object as our response."""
    status = data.get("status")
    if status == "failed":
        raise IncompleteResponseError(f"the response failed: {_error_text(data.get('error'))}")
    if status not in (None, "completed", "incomplete"):
        raise IncompleteResponseError(f"the response is not finished (status {status!r})")
    output = data.get("output")
    if not isinstance(output, list):
        raise IncompleteResponseError("the response holds no output")
    text = "".join(_item_text(item) for item in output if isinstance(item, Mapping))
    calls = parse_calls(output)
    message = AssistantMessage(
        content=text or None, tool_calls=calls, provider_state=reasoning_state(output)
    )
    return ModelResponse(
        message=message,
        usage=parse_usage(data.get("usage")),
        finish_reason=finish_reason(data, has_calls=bool(calls)),
        model=checked_text(data.get("model"), "model"),
        id=checked_text(data.get("id"), "id"),
    )


def parse_calls(items: Sequence[Any]) -> tuple[ToolCall, ...]:
    """The function calls among output items, in order, arguments as the raw text; a field
    of the wrong JSON type is an ``UnexpectedResponseError`` naming its path."""
    calls = [
        (at, item)
        for at, item in enumerate(items)
        if isinstance(item, Mapping) and item.get("type") == "function_call"
    ]
    return tuple(_call(item, f"output[{at}]", index) for index, (at, item) in enumerate(calls))


def _call(item: Mapping[str, Any], where: str, index: int) -> ToolCall:
    call_id = checked_text(item.get("call_id"), f"{where}.call_id")
    item_id = checked_text(item.get("id"), f"{where}.id")
    return ToolCall(
        id=call_id or item_id or f"call_{index}",
        name=checked_text(item.get("name"), f"{where}.name") or "",
        arguments=checked_text(item.get("arguments"), f"{where}.arguments") or "",
    )


def parse_usage(raw: Any, where: str = "usage") -> Usage:
    """Token counts; a response without them has unknown usage (not zero)."""
    if raw is None:
        return Usage(reported=False)
    if not isinstance(raw, Mapping):
        raise UnexpectedResponseError(f"{where} must be an object or null")
    return Usage(
        prompt_tokens=checked_count(raw.get("input_tokens"), f"{where}.input_tokens"),
        completion_tokens=checked_count(raw.get("output_tokens"), f"{where}.output_tokens"),
        total_tokens=checked_count(raw.get("total_tokens"), f"{where}.total_tokens"),
        cache_read_tokens=cached_count(raw, "input_tokens_details", where),
    )


def finish_reason(data: Mapping[str, Any], *, has_calls: bool) -> str:
    """The Chat Completions name of why the answer ended, so the loop sees one vocabulary.

    An incomplete answer cut by ``max_output_tokens`` is ``length``; another cause keeps its
    own name (``content_filter``).
    """
    if data.get("status") == "incomplete":
        details = data.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, Mapping) else None
        return "length" if reason in (None, "max_output_tokens") else str(reason)
    return "tool_calls" if has_calls else "stop"


def _item_text(item: Mapping[str, Any]) -> str:
    if item.get("type", "message") != "message":
        return ""
    content = item.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "".join(_part_text(part) for part in parts if isinstance(part, Mapping))


def _part_text(part: Mapping[str, Any]) -> str:
    if part.get("type") == "refusal":
        return str(part.get("refusal") or "")
    return str(part.get("text") or "") if part.get("type") == "output_text" else ""


def _error_text(error: Any) -> str:
    if isinstance(error, Mapping):
        return str(error.get("message") or error.get("code") or "no detail")
    return "no detail"


@dataclass(kw_only=True, slots=True)
class _PartialCall:
    """A function call still streaming in (mutable: it grows with each event)."""

    index: int
    """Its position among the turn's calls."""
    id: str = ""
    """The call id, once an event carried it."""
    name: str = ""
    """The tool name, once an event carried it."""
    arguments: list[str] = field(default_factory=list)
    """The argument fragments so far."""


@dataclass(kw_only=True, slots=True)
class ResponseStreamAssembler:
    """Turns streamed events into deltas and, at the terminal event, the complete response."""

    text: list[str] = field(default_factory=list)
    """The text fragments so far."""
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    """The function calls so far, by their output index."""
    final: Mapping[str, Any] | None = None
    """The response object of the terminal event, once it arrived."""

    def add(self, event: Mapping[str, Any]) -> list[ModelDelta]:
        """Take in one event; return the deltas it carries."""
        kind = event.get("type")
        if not isinstance(kind, str):
            return []  # not an event this adapter knows; the terminal event decides
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            return self._add_text(str(event.get("delta") or ""))
        if kind == "response.output_item.added":
            return self._add_item(event)
        if kind == "response.function_call_arguments.delta":
            return self._add_arguments(event)
        if kind == "response.output_item.done":
            self._finish_item(event)
        elif kind in _TERMINAL_EVENTS:
            self.final = _mapping(event.get("response"))
        elif kind in ("response.failed", "error"):
            failed = _mapping(event.get("response")).get("error") or event
            raise IncompleteResponseError(f"the response failed: {_error_text(failed)}")
        return []

    def _add_text(self, delta: str) -> list[ModelDelta]:
        if not delta:
            return []
        self.text.append(delta)
        return [TextDelta(text=delta)]

    def _add_item(self, event: Mapping[str, Any]) -> list[ModelDelta]:
        item = _mapping(event.get("item"))
        if item.get("type") != "function_call":
            return []
        where = "output_item.added.item"
        call = _PartialCall(
            index=len(self.calls), id=checked_text(item.get("call_id"), f"{where}.call_id") or ""
        )
        call.name = checked_text(item.get("name"), f"{where}.name") or ""
        call.arguments.append(checked_text(item.get("arguments"), f"{where}.arguments") or "")
        self.calls[_output_index(event)] = call
        return [
            ToolCallDelta(
                index=call.index, id=call.id or None, name=call.name, arguments=call.arguments[0]
            )
        ]

    def _add_arguments(self, event: Mapping[str, Any]) -> list[ModelDelta]:
        call = self.calls.get(_output_index(event))
        delta = checked_text(event.get("delta"), "function_call_arguments.delta.delta") or ""
        if call is None or not delta:
            return []
        call.arguments.append(delta)
        return [ToolCallDelta(index=call.index, arguments=delta)]

    def _finish_item(self, event: Mapping[str, Any]) -> None:
        """A finished function call is authoritative: its whole arguments replace the pieces."""
        item = _mapping(event.get("item"))
        call = self.calls.get(_output_index(event))
        if call is None or item.get("type") != "function_call":
            return
        where = "output_item.done.item"
        call.id = checked_text(item.get("call_id"), f"{where}.call_id") or call.id
        call.name = checked_text(item.get("name"), f"{where}.name") or call.name
        arguments = checked_text(item.get("arguments"), f"{where}.arguments")
        if arguments is not None:
            call.arguments = [arguments]

    def response(self) -> ModelResponse:
        """The assembled response; a stream that never finished the response was cut short."""
        if self.final is None:
            raise IncompleteResponseError("the stream ended before the response was completed")
        calls = tuple(
            ToolCall(
                id=call.id or f"call_{call.index}",
                name=call.name,
                arguments="".join(call.arguments),
            )
            for call in self.calls.values()
        )
        output = self.final.get("output")
        message = AssistantMessage(
            content="".join(self.text) or None,
            tool_calls=calls,
            provider_state=reasoning_state(output if isinstance(output, list) else []),
        )
        return ModelResponse(
            message=message,
            usage=parse_usage(self.final.get("usage"), "response.usage"),
            finish_reason=finish_reason(self.final, has_calls=bool(calls)),
            model=checked_text(self.final.get("model"), "response.model"),
            id=checked_text(self.final.get("id"), "response.id"),
        )


def _output_index(event: Mapping[str, Any]) -> int:
    index = event.get("output_index")
    return checked_count(index, f"{event.get('type')}.output_index")


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
