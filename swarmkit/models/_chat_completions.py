"""The Chat Completions wire format: our requests as JSON params, JSON answers as our records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, assert_never

from swarmkit.messages import (
    AssistantMessage,
    Message,
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
    OutputSchema,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
    Usage,
)


class IncompleteResponseError(ValueError):
    """The server answered, but not with a complete chat completion (worth another attempt)."""


def request_params(model: str, request: ModelRequest) -> dict[str, Any]:
    """The keyword arguments of ``chat.completions.create`` for one request (without streaming)."""
    params: dict[str, Any] = {
        "model": model,
        "messages": [message_param(m) for m in request.messages],
    }
    if request.tools:
        params["tools"] = [tool_param(t) for t in request.tools]
    params.update(settings_params(request.settings, has_tools=bool(request.tools)))
    if request.output_schema is not None:
        params["response_format"] = response_format(request.output_schema)
    if request.settings.extra_body:
        params["extra_body"] = plain_json(request.settings.extra_body)
    return params


def message_param(message: Message) -> dict[str, Any]:
    """One message as the API expects it; our own fields (agent, is_error) stay behind."""
    match message:
        case SystemMessage(content=content):
            return {"role": "system", "content": content}
        case UserMessage(content=content):
            return {"role": "user", "content": content}
        case AssistantMessage():
            return assistant_param(message)
        case ToolMessage(tool_call_id=call_id, content=content):
            return {"role": "tool", "tool_call_id": call_id, "content": content}
        case _:
            assert_never(message)


def assistant_param(message: AssistantMessage) -> dict[str, Any]:
    """An assistant turn; content is always a string.

    The API allows ``content: null`` beside tool calls, but some compatible servers reject null
    (or a missing key) and chat templates concatenate it as text, while every server we know
    accepts ``""``; so a turn with only tool calls is sent with empty text.
    """
    param: dict[str, Any] = {"role": "assistant", "content": message.content or ""}
    if message.tool_calls:
        param["tool_calls"] = [tool_call_param(c) for c in message.tool_calls]
    return param


def tool_call_param(call: ToolCall) -> dict[str, Any]:
    """A tool call as the model made it; arguments go back as the raw text, even if malformed."""
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments},
    }


def tool_param(spec: ToolSpec) -> dict[str, Any]:
    """A function tool; ``strict`` is sent only when the schema is meant for strict mode."""
    function: dict[str, Any] = {
        "name": spec.name,
        "description": spec.description,
        "parameters": plain_json(spec.parameters),
    }
    if spec.strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def settings_params(settings: ModelSettings, *, has_tools: bool) -> dict[str, Any]:
    """The settings that are set; tool settings only with tools, as the API rejects them alone."""
    candidates: dict[str, Any] = {
        "temperature": settings.temperature,
        "top_p": settings.top_p,
        # ``max_tokens`` rather than ``max_completion_tokens``: every compatible server knows it.
        "max_tokens": settings.max_tokens,
        "seed": settings.seed,
    }
    if has_tools:
        candidates["tool_choice"] = tool_choice_param(settings.tool_choice)
        candidates["parallel_tool_calls"] = settings.parallel_tool_calls
    return {key: value for key, value in candidates.items() if value is not None}


def tool_choice_param(choice: str | None) -> str | dict[str, Any] | None:
    """``auto``/``required``/``none`` as they are; any other string names the tool to force."""
    if choice is None or choice in ("auto", "required", "none"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def response_format(schema: OutputSchema) -> dict[str, Any]:
    """Structured output: the answer must be JSON following ``schema``."""
    json_schema = {
        "name": schema.name,
        "schema": plain_json(schema.schema),
        "strict": schema.strict,
    }
    return {"type": "json_schema", "json_schema": json_schema}


def plain_json(value: Any) -> Any:
    """A deep copy made of dicts and lists, so read-only mappings and tuples serialise."""
    if isinstance(value, Mapping):
        return {str(key): plain_json(item) for key, item in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [plain_json(item) for item in value]
    return value


def parse_completion(data: Mapping[str, Any]) -> ModelResponse:
    """A complete (non-streamed) chat completion as our response."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise IncompleteResponseError("the response holds no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, Mapping):
        raise IncompleteResponseError("the response's first choice holds no message")
    return ModelResponse(
        message=AssistantMessage(
            content=message.get("content") or message.get("refusal") or None,
            tool_calls=parse_tool_calls(message.get("tool_calls") or []),
        ),
        usage=parse_usage(data.get("usage")),
        finish_reason=choice.get("finish_reason"),
        model=data.get("model"),
    )


def parse_tool_calls(raw: Sequence[Mapping[str, Any]]) -> tuple[ToolCall, ...]:
    """Function tool calls, arguments kept as the raw text the model wrote."""
    return tuple(
        ToolCall(
            # Some compatible servers give no ids; a positional one keeps the round trip valid.
            id=call.get("id") or f"call_{index}",
            name=call["function"].get("name") or "",
            arguments=call["function"].get("arguments") or "",
        )
        for index, call in enumerate(raw)
        if isinstance(call.get("function"), Mapping)
    )


def parse_usage(raw: Any) -> Usage:
    """Token counts; absent or null counts are zero, and no usage at all is unknown usage."""
    if not isinstance(raw, Mapping):
        return Usage(reported=False)
    return Usage(
        prompt_tokens=int(raw.get("prompt_tokens") or 0),
        completion_tokens=int(raw.get("completion_tokens") or 0),
        total_tokens=int(raw.get("total_tokens") or 0),
    )


@dataclass(kw_only=True, slots=True)
class _PartialCall:
    """A tool call still streaming in (mutable: it grows with each chunk)."""

    id: str = ""
    """The call id, once a chunk carried it."""
    name: str = ""
    """The tool name, once a chunk carried it."""
    arguments: list[str] = field(default_factory=list)
    """The argument fragments so far."""


@dataclass(kw_only=True, slots=True)
class StreamAssembler:
    """Turns streamed chunks into deltas and, at the end, the complete response."""

    text: list[str] = field(default_factory=list)
    """The text fragments so far."""
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    """The tool calls so far, by their index in the turn."""
    finish_reason: str | None = None
    """Why the model stopped, once a chunk said so."""
    usage: Usage = field(default_factory=lambda: Usage(reported=False))
    """Token counts, from the chunk that carries them (unknown until one does)."""
    model: str | None = None
    """The model name the server reported."""

    def add(self, chunk: Mapping[str, Any]) -> list[ModelDelta]:
        """Take in one chunk; return the deltas it carries, in order."""
        self.model = chunk.get("model") or self.model
        if chunk.get("usage"):
            self.usage = parse_usage(chunk["usage"])
        deltas: list[ModelDelta] = []
        for choice in chunk.get("choices") or []:
            # We never ask for n > 1; other choices would interleave with the first.
            if choice.get("index", 0) == 0:
                deltas.extend(self._add_choice(choice))
        return deltas

    def _add_choice(self, choice: Mapping[str, Any]) -> list[ModelDelta]:
        self.finish_reason = choice.get("finish_reason") or self.finish_reason
        delta = choice.get("delta") or {}
        deltas: list[ModelDelta] = []
        if delta.get("content"):
            self.text.append(delta["content"])
            deltas.append(TextDelta(text=delta["content"]))
        for piece in delta.get("tool_calls") or []:
            deltas.append(self._add_call_piece(piece))
        return deltas

    def _add_call_piece(self, piece: Mapping[str, Any]) -> ToolCallDelta:
        index = int(piece.get("index") or 0)
        call = self.calls.setdefault(index, _PartialCall())
        function = piece.get("function") or {}
        call.id = call.id or piece.get("id") or ""
        # The name arrives whole on the call's first piece; later pieces may repeat it.
        call.name = call.name or function.get("name") or ""
        call.arguments.append(function.get("arguments") or "")
        return ToolCallDelta(
            index=index,
            id=piece.get("id"),
            name=function.get("name"),
            arguments=function.get("arguments") or "",
        )

    def response(self) -> ModelResponse:
        """The assembled response; a stream that never said why it stopped was cut short."""
        if self.finish_reason is None:
            raise IncompleteResponseError("the stream ended without a finish reason")
        calls = tuple(
            ToolCall(
                id=call.id or f"call_{index}", name=call.name, arguments="".join(call.arguments)
            )
            for index, call in sorted(self.calls.items())
        )
        return ModelResponse(
            message=AssistantMessage(content="".join(self.text) or None, tool_calls=calls),
            usage=self.usage,
            finish_reason=self.finish_reason,
            model=self.model,
        )
