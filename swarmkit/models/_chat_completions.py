"""The Chat Completions wire format: our requests as JSON params, JSON answers as our records."""

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
    OutputSchema,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
    Usage,
)
from swarmkit.models._wire import (
    ErrorAnswerError,
    IncompleteResponseError,
    cached_count,
    checked_count,
    checked_list,
    checked_mapping,
    checked_text,
    plain_json,
    sendable,
    set_only,
    tool_settings,
)
from swarmkit.models._wire_cache import MESSAGES_MARK, WireCache, json_bytes, spliced_body

PROVIDER = "openai"
"""The name Chat Completions state is kept under, whichever server speaks it."""

MESSAGE_FIELDS = ("reasoning_content", "reasoning", "reasoning_details")
"""Fields of an answer's message that reasoning servers (vLLM, DeepSeek, OpenRouter) return
and want back with the turn."""

CALL_FIELDS = ("extra_content",)
"""Fields of a tool call a server wants back with it (Gemini's ``extra_content.google``)."""


def kept_fields(source: Mapping[str, Any], names: Sequence[str]) -> ProviderState | None:
    """The fields of ``names`` that ``source`` holds (not null), as Chat Completions state."""
    data = {name: source[name] for name in names if source.get(name) is not None}
    return ProviderState(provider=PROVIDER, data=data) if data else None


def _error_answer(data: Mapping[str, Any]) -> ErrorAnswerError | None:
    error = data.get("error")
    if not isinstance(error, Mapping):
        return None
    message = error.get("message")
    text = message if isinstance(message, str) and message else "the server answered an error"
    return ErrorAnswerError(text, body=error)


def request_json(model: str, request: ModelRequest, *, stream: bool = False) -> bytes:
    """The JSON body ``POST /chat/completions`` sends for one request: ``extra_body`` merged
    in, each message's JSON made once in its life (not once a call). A stream asks for its
    usage in the last chunk."""
    params = request_params(model, request, messages=MESSAGES_MARK)
    extra = params.pop("extra_body", {})
    if stream:
        params["stream_options"] = {"include_usage": True}
    body = {**params, **extra, "stream": stream}
    return spliced_body(body, _MESSAGE_JSON.array(request.messages))


def request_params(model: str, request: ModelRequest, *, messages: object = None) -> dict[str, Any]:
    """The keyword arguments of ``chat.completions.create`` for one request (without streaming);
    ``messages`` stands in for the message list when given."""
    params: dict[str, Any] = {
        "model": model,
        "messages": [message_param(m) for m in request.messages] if messages is None else messages,
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
            return {"role": "system", "content": sendable(content)}
        case UserMessage(content=content):
            return {"role": "user", "content": sendable(content)}
        case AssistantMessage():
            return assistant_param(message)
        case ToolMessage(tool_call_id=call_id, content=content):
            return {"role": "tool", "tool_call_id": call_id, "content": sendable(content)}
        case _:
            assert_never(message)


_MESSAGE_JSON = WireCache(lambda message: json_bytes(message_param(message)))


def assistant_param(message: AssistantMessage) -> dict[str, Any]:
    """An assistant turn; content is always a string.

    The API allows ``content: null`` beside tool calls, but some compatible servers reject null
    (or a missing key) and chat templates concatenate it as text, while every server we know
    accepts ``""``; so a turn with only tool calls is sent with empty text.
    """
    param: dict[str, Any] = {"role": "assistant", "content": sendable(message.content or "")}
    state = message.provider_state
    if state is not None and state.provider == PROVIDER:
        param.update(state.data)
    if message.tool_calls:
        param["tool_calls"] = [tool_call_param(c) for c in message.tool_calls]
    return param


def tool_call_param(call: ToolCall) -> dict[str, Any]:
    """A tool call as the model made it; arguments go back as the raw text, even if malformed,
    with the fields the server tied to it (Gemini's thought signature in ``extra_content``)."""
    param = {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": sendable(call.arguments)},
    }
    state = call.provider_state
    if state is not None and state.provider == PROVIDER:
        param.update(state.data)
    return param


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
    return set_only(
        {
            "temperature": settings.temperature,
            "top_p": settings.top_p,
            # ``max_tokens``, not ``max_completion_tokens``: every compatible server knows it.
            "max_tokens": settings.max_tokens,
            "seed": settings.seed,
            **(tool_settings(settings, _forced_function) if has_tools else {}),
        }
    )


def _forced_function(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name}}


def response_format(schema: OutputSchema) -> dict[str, Any]:
    """Structured output: the answer must be JSON following ``schema``."""
    json_schema = {
        "name": schema.name,
        "schema": plain_json(schema.schema),
        "strict": schema.strict,
    }
    return {"type": "json_schema", "json_schema": json_schema}


def parse_completion(data: Mapping[str, Any]) -> ModelResponse:
    """A complete (non-streamed) chat completion as our response."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise _error_answer(data) or IncompleteResponseError("the response holds no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, Mapping):
        raise IncompleteResponseError("the response's first choice holds no message")
    content = checked_text(message.get("content"), "message.content")
    refusal = checked_text(message.get("refusal"), "message.refusal")
    return ModelResponse(
        message=AssistantMessage(
            content=content or refusal or None,
            tool_calls=parse_tool_calls(
                checked_list(message.get("tool_calls"), "message.tool_calls")
            ),
            provider_state=kept_fields(message, MESSAGE_FIELDS),
        ),
        usage=parse_usage(data.get("usage")),
        finish_reason=checked_text(choice.get("finish_reason"), "finish_reason"),
        model=checked_text(data.get("model"), "model"),
        id=checked_text(data.get("id"), "id"),
    )


def parse_tool_calls(raw: Sequence[Any]) -> tuple[ToolCall, ...]:
    """Function tool calls, arguments kept as the raw text the model wrote."""
    calls: list[ToolCall] = []
    for index, item in enumerate(raw):
        where = f"tool_calls[{index}]"
        call = checked_mapping(item, where)
        if call.get("type", "function") != "function" and "function" not in call:
            continue  # a kind of call we do not offer (the API may add new ones)
        function = checked_mapping(call.get("function"), f"{where}.function")
        calls.append(
            ToolCall(
                # Some compatible servers give no ids; a positional one keeps the round trip valid.
                id=checked_text(call.get("id"), f"{where}.id") or f"call_{index}",
                name=checked_text(function.get("name"), f"{where}.function.name") or "",
                arguments=checked_text(function.get("arguments"), f"{where}.function.arguments")
                or "",
                provider_state=kept_fields(call, CALL_FIELDS),
            )
        )
    return tuple(calls)


def parse_usage(raw: Any) -> Usage:
    """Token counts; absent or null counts are zero, no usage at all is unknown usage, and
    anything but an integer count is refused."""
    if raw is None:
        return Usage(reported=False)
    usage = checked_mapping(raw, "usage")
    return Usage(
        prompt_tokens=checked_count(usage.get("prompt_tokens"), "usage.prompt_tokens"),
        completion_tokens=checked_count(usage.get("completion_tokens"), "usage.completion_tokens"),
        total_tokens=checked_count(usage.get("total_tokens"), "usage.total_tokens"),
        cache_read_tokens=cached_count(usage, "prompt_tokens_details", "usage"),
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
    extra: dict[str, Any] = field(default_factory=dict)
    """The server's own fields of the call (``extra_content``), once a chunk carried them."""


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
    id: str | None = None
    """The completion's id, from the first chunk that carried it."""
    reasoning: dict[str, list[str]] = field(default_factory=dict)
    """The reasoning text fragments so far, by field (``reasoning_content`` ...)."""

    def add(self, chunk: Mapping[str, Any]) -> list[ModelDelta]:
        """Take in one chunk; return the deltas it carries, in order."""
        self.model = checked_text(chunk.get("model"), "model") or self.model
        self.id = checked_text(chunk.get("id"), "id") or self.id
        if chunk.get("usage"):
            self.usage = parse_usage(chunk["usage"])
        deltas: list[ModelDelta] = []
        for item in checked_list(chunk.get("choices"), "choices"):
            choice = checked_mapping(item, "choices[]")
            # We never ask for n > 1; other choices would interleave with the first.
            if choice.get("index", 0) == 0:
                deltas.extend(self._add_choice(choice))
        return deltas

    def _add_choice(self, choice: Mapping[str, Any]) -> list[ModelDelta]:
        reason = checked_text(choice.get("finish_reason"), "finish_reason")
        self.finish_reason = reason or self.finish_reason
        delta = checked_mapping(choice.get("delta") or {}, "delta")
        deltas: list[ModelDelta] = []
        for name in ("reasoning_content", "reasoning"):
            piece = delta.get(name)
            if isinstance(piece, str) and piece:
                self.reasoning.setdefault(name, []).append(piece)
        content = checked_text(delta.get("content"), "delta.content")
        if content:
            self.text.append(content)
            deltas.append(TextDelta(text=content))
        for piece in checked_list(delta.get("tool_calls"), "delta.tool_calls"):
            deltas.append(self._add_call_piece(checked_mapping(piece, "delta.tool_calls[]")))
        return deltas

    def _add_call_piece(self, piece: Mapping[str, Any]) -> ToolCallDelta:
        index = checked_count(piece.get("index"), "delta.tool_calls[].index")
        call = self.calls.setdefault(index, _PartialCall())
        function = checked_mapping(piece.get("function") or {}, "delta.tool_calls[].function")
        call_id = checked_text(piece.get("id"), "delta.tool_calls[].id")
        name = checked_text(function.get("name"), "delta.tool_calls[].function.name")
        arguments = checked_text(function.get("arguments"), "delta.tool_calls[].function.arguments")
        call.id = call.id or call_id or ""
        # The name arrives whole on the call's first piece; later pieces may repeat it.
        call.name = call.name or name or ""
        call.arguments.append(arguments or "")
        call.extra.update({n: piece[n] for n in CALL_FIELDS if piece.get(n) is not None})
        return ToolCallDelta(index=index, id=call_id, name=name, arguments=arguments or "")

    def response(self) -> ModelResponse:
        """The assembled response; a stream that never said why it stopped was cut short."""
        if self.finish_reason is None:
            raise IncompleteResponseError("the stream ended without a finish reason")
        calls = tuple(
            ToolCall(
                id=call.id or f"call_{index}",
                name=call.name,
                arguments="".join(call.arguments),
                provider_state=kept_fields(call.extra, CALL_FIELDS),
            )
            for index, call in sorted(self.calls.items())
        )
        reasoning = {name: "".join(pieces) for name, pieces in self.reasoning.items()}
        message = AssistantMessage(
            content="".join(self.text) or None,
            tool_calls=calls,
            provider_state=kept_fields(reasoning, MESSAGE_FIELDS),
        )
        return ModelResponse(
            message=message,
            usage=self.usage,
            finish_reason=self.finish_reason,
            model=self.model,
            id=self.id,
        )
