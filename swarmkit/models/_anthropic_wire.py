"""The Anthropic Messages wire format: our requests as ``messages.create`` params, its answers
and stream events as our records."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
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
    checked_text,
    json_type,
    plain_json,
    sendable,
    set_only,
)
from swarmkit.models._wire_cache import ByIdentity

PROVIDER = "anthropic"
"""The name Anthropic's state is kept under."""

REASONING_BLOCKS = frozenset({"thinking", "redacted_thinking"})
"""The blocks the API signs and wants back unchanged."""

_CACHE = {"type": "ephemeral"}

_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}


@dataclass(frozen=True, kw_only=True, slots=True)
class RequestOptions:
    """The adapter's own settings that shape every request."""

    max_tokens: int
    """Sent when the agent's settings set no ``max_tokens`` (the API requires one)."""
    thinking_budget: int | None = None
    """Extended thinking's token budget, or None for no extended thinking."""
    cache_prompt: bool = False
    """Whether the instructions and tools are marked for prompt caching."""


def request_params(model: str, request: ModelRequest, options: RequestOptions) -> dict[str, Any]:
    """The keyword arguments of ``messages.create`` for one request."""
    system = "\n\n".join(
        sendable(m.content) for m in request.messages if isinstance(m, SystemMessage)
    )
    params: dict[str, Any] = {
        "model": model,
        "messages": conversation(request.messages, thinking=options.thinking_budget is not None),
        "max_tokens": request.settings.max_tokens or options.max_tokens,
    }
    if system:
        params["system"] = (
            [{"type": "text", "text": system, "cache_control": _CACHE}]
            if options.cache_prompt
            else system
        )
    if request.tools:
        params["tools"] = [tool_param(spec) for spec in request.tools]
        if options.cache_prompt:
            params["tools"][-1]["cache_control"] = _CACHE
        choice = tool_choice(request.settings)
        if choice is not None:
            params["tool_choice"] = choice
    params.update(_sampling(request.settings))
    if options.thinking_budget is not None:
        params["thinking"] = {"type": "enabled", "budget_tokens": options.thinking_budget}
    if request.output_schema is not None:
        schema = plain_json(request.output_schema.schema)
        params["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
    if request.settings.extra_body:
        params["extra_body"] = plain_json(request.settings.extra_body)
    return params


def _sampling(settings: ModelSettings) -> dict[str, Any]:
    # ``seed`` has no Messages API field and is not sent.
    return set_only({"temperature": settings.temperature, "top_p": settings.top_p})


def tool_param(spec: ToolSpec) -> dict[str, Any]:
    """A client tool: its name, description and input schema."""
    return {
        "name": spec.name,
        "description": spec.description,
        "input_schema": plain_json(spec.parameters),
    }


def tool_choice(settings: ModelSettings) -> dict[str, Any] | None:
    """``auto``, ``required`` (the API's ``any``), ``none`` or a named tool; parallel calls
    switched off ride on the choice, as the API wants."""
    choice = settings.tool_choice
    param: dict[str, Any]
    if choice is None:
        if settings.parallel_tool_calls is not False:
            return None
        param = {"type": "auto"}
    elif choice == "required":
        param = {"type": "any"}
    elif choice in ("auto", "none"):
        param = {"type": choice}
    else:
        param = {"type": "tool", "name": choice}
    if settings.parallel_tool_calls is False and param["type"] != "none":
        param["disable_parallel_tool_use"] = True
    return param


def conversation(messages: Sequence[Message], *, thinking: bool = False) -> list[dict[str, Any]]:
    """The turns after the instructions; consecutive turns of one role become one, since the
    API wants every tool result of a turn in the one user message that follows it.

    With extended thinking on, the API wants the tool-use turn being answered to open with
    its signed thinking. When another provider's model made that turn (the calls of a handoff
    into this agent), there is none: that turn and its results go as text instead.
    """
    if thinking:
        messages = foreign_tail_as_text(messages)
    turns: list[dict[str, Any]] = []
    for message in messages:
        turn = _cached_turn(message)
        if turn is None:
            continue
        if turns and turns[-1]["role"] == turn["role"]:
            # A new dict: the cached turns are shared by every later call.
            content = [*_blocks(turns[-1]["content"]), *_blocks(turn["content"])]
            turns[-1] = {"role": turn["role"], "content": content}
        else:
            turns.append(turn)
    return turns


_TURNS: ByIdentity[dict[str, Any] | None] = ByIdentity()


def _cached_turn(message: Message) -> dict[str, Any] | None:
    """A message's turn, built once in its life (a long history is not rebuilt each call)."""
    if isinstance(message, SystemMessage):
        return None
    found = _TURNS.find(message)
    if found is None:
        found = message_param(message)
        _TURNS.put(message, found)
    return found


def foreign_tail_as_text(messages: Sequence[Message]) -> Sequence[Message]:
    """The history with a trailing tool-use turn of another provider (and its results) told
    as one user message, so a thinking model can take over from it."""
    last = len(messages) - 1
    while last >= 0 and isinstance(messages[last], ToolMessage):
        last -= 1
    turn = messages[last] if last >= 0 else None
    if not isinstance(turn, AssistantMessage) or not turn.tool_calls or last == len(messages) - 1:
        return messages
    if turn.provider_state is not None and turn.provider_state.provider == PROVIDER:
        return messages
    lines = [turn.content] if turn.content else []
    lines += [f"Called {c.name}({c.arguments})" for c in turn.tool_calls]
    results = [m for m in messages[last + 1 :] if isinstance(m, ToolMessage)]
    lines += [f"{m.name} returned: {m.content}" for m in results]
    told = UserMessage(content="Earlier in this conversation:\n" + "\n".join(lines))
    return (*messages[:last], told)


def _blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def message_param(message: Message) -> dict[str, Any] | None:
    """One message as a turn (None for what the API has no turn for)."""
    match message:
        case SystemMessage():
            return None  # sent as ``system``
        case UserMessage(content=content):
            return {"role": "user", "content": sendable(content) or " "}
        case AssistantMessage():
            blocks = assistant_blocks(message)
            return {"role": "assistant", "content": blocks} if blocks else None
        case ToolMessage():
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": sendable(message.content),
            }
            if message.is_error:
                block["is_error"] = True
            return {"role": "user", "content": [block]}
        case _:
            assert_never(message)


def assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    """An assistant turn's blocks: its signed thinking first (only when Anthropic made it),
    then its text, then its tool calls."""
    blocks: list[dict[str, Any]] = []
    state = message.provider_state
    if state is not None and state.provider == PROVIDER:
        blocks.extend(dict(b) for b in state.data.get("blocks", ()))
    if message.content:
        blocks.append({"type": "text", "text": sendable(message.content)})
    blocks.extend(tool_use_block(call) for call in message.tool_calls)
    return blocks


def tool_use_block(call: ToolCall) -> dict[str, Any]:
    """A call as the model made it; arguments that are not a JSON object go as ``{}``
    (the API takes only an object, and the call's result already reports the mistake)."""
    try:
        arguments = json.loads(call.arguments) if call.arguments else {}
    except ValueError:
        arguments = {}
    if not isinstance(arguments, dict):
        arguments = {}
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": arguments}


def parse_message(data: Mapping[str, Any]) -> ModelResponse:
    """A complete message (the SDK's, as JSON) as our response; a field of the wrong JSON
    type is an ``UnexpectedResponseError`` naming its path."""
    content = data.get("content")
    if not isinstance(content, list):
        raise IncompleteResponseError("the message holds no content")
    answer = _response(content, data.get("stop_reason"), data.get("usage"), data.get("model"))
    return _with_id(answer, data.get("id"))


def json_object(value: object, where: str) -> Mapping[str, Any]:
    """An answer's part that must be a JSON object (null reads as empty)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise UnexpectedResponseError(f"{where} must be an object, got {json_type(value)}")
    return value


def _response(
    blocks: Sequence[object], stop: object, usage: object, model: object
) -> ModelResponse:
    checked = [_block(block, at) for at, block in enumerate(blocks)]
    text = "".join(str(b.get("text") or "") for b in checked if b.get("type") == "text")
    calls = tuple(
        _call(block, f"content[{at}]")
        for at, block in enumerate(checked)
        if block.get("type") == "tool_use"
    )
    reasoning = [dict(b) for b in checked if b.get("type") in REASONING_BLOCKS]
    state = ProviderState(provider=PROVIDER, data={"blocks": reasoning}) if reasoning else None
    reason = str(stop) if stop is not None else None
    return ModelResponse(
        message=AssistantMessage(content=text or None, tool_calls=calls, provider_state=state),
        usage=parse_usage(usage),
        finish_reason=_STOP_REASONS.get(reason, reason) if reason is not None else None,
        model=model if isinstance(model, str) else None,
    )


def _with_id(response: ModelResponse, message_id: object) -> ModelResponse:
    """The response with the message's id (``msg_...``), when the answer carried a text one."""
    if not isinstance(message_id, str):
        return response
    return replace(response, id=message_id)


def _block(block: object, at: int) -> Mapping[str, Any]:
    if not isinstance(block, Mapping):
        raise UnexpectedResponseError(f"content[{at}] must be an object, got {json_type(block)}")
    return block


def _call(block: Mapping[str, Any], where: str) -> ToolCall:
    """A tool_use block as a call: its id must be text, as the call's result must name it."""
    call_id = checked_text(block.get("id"), f"{where}.id")
    if not call_id:
        raise UnexpectedResponseError(f"{where}.id must be a non-empty string")
    name = checked_text(block.get("name"), f"{where}.name") or ""
    return ToolCall(id=call_id, name=name, arguments=_arguments(block))


def _arguments(block: Mapping[str, Any]) -> str:
    raw = block.get("input")
    if isinstance(raw, str):  # a streamed call's joined JSON text
        return raw or "{}"
    return json.dumps(raw if raw is not None else {}, ensure_ascii=False)


def parse_usage(raw: object) -> Usage:
    """Token counts; the prompt counts the cached tokens too, as OpenAI's does."""
    if not isinstance(raw, Mapping):
        return Usage(reported=False)
    read = int(raw.get("cache_read_input_tokens") or 0)
    written = int(raw.get("cache_creation_input_tokens") or 0)
    prompt = int(raw.get("input_tokens") or 0) + read + written
    completion = int(raw.get("output_tokens") or 0)
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        cache_read_tokens=read,
        cache_write_tokens=written,
    )


@dataclass(kw_only=True, slots=True)
class StreamAssembler:
    """Turns stream events into deltas and, at ``message_stop``, the complete response."""

    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    """The content blocks so far, by index (text and JSON grow in place)."""
    calls: dict[int, int] = field(default_factory=dict)
    """Each tool-use block's position among the turn's calls, by block index."""
    usage: dict[str, Any] = field(default_factory=dict)
    """The usage of ``message_start``, updated by ``message_delta``."""
    stop_reason: str | None = None
    """Why the model stopped, once ``message_delta`` said."""
    model: str | None = None
    """The model that answered."""
    id: str | None = None
    """The message's id, from ``message_start``."""
    stopped: bool = False
    """Whether ``message_stop`` arrived."""

    def add(self, event: Mapping[str, Any]) -> list[ModelDelta]:
        """Take in one event; return the deltas it carries."""
        kind = event.get("type")
        if kind == "content_block_start":
            block = dict(json_object(event.get("content_block"), "content_block"))
            return self._start(int(event.get("index") or 0), block)
        if kind == "content_block_delta":
            delta = json_object(event.get("delta"), "content_block_delta.delta")
            return self._delta(int(event.get("index") or 0), delta)
        if kind == "message_start":
            message = json_object(event.get("message"), "message_start.message")
            self.usage = dict(json_object(message.get("usage"), "message.usage"))
            self.model = message.get("model")
            self.id = message.get("id") if isinstance(message.get("id"), str) else None
        elif kind == "message_delta":
            delta = json_object(event.get("delta"), "message_delta.delta")
            self.stop_reason = delta.get("stop_reason") or self.stop_reason
            usage = json_object(event.get("usage"), "message_delta.usage")
            self.usage.update({k: v for k, v in usage.items() if v})
        elif kind == "message_stop":
            self.stopped = True
        return []

    def _start(self, index: int, block: dict[str, Any]) -> list[ModelDelta]:
        self.blocks[index] = block
        if block.get("type") == "text" and block.get("text"):
            return [TextDelta(text=str(block["text"]))]
        if block.get("type") != "tool_use":
            return []
        block["input"] = ""
        self.calls[index] = len(self.calls)
        return [ToolCallDelta(index=self.calls[index], id=block.get("id"), name=block.get("name"))]

    def _delta(self, index: int, delta: Mapping[str, Any]) -> list[ModelDelta]:
        block = self.blocks.get(index)
        kind = delta.get("type")
        if block is None:
            return []
        if kind == "text_delta":
            piece = str(delta.get("text") or "")
            block["text"] = str(block.get("text") or "") + piece
            return [TextDelta(text=piece)] if piece else []
        if kind == "input_json_delta":
            piece = str(delta.get("partial_json") or "")
            block["input"] += piece
            return [ToolCallDelta(index=self.calls[index], arguments=piece)] if piece else []
        if kind == "thinking_delta":
            block["thinking"] = str(block.get("thinking") or "") + str(delta.get("thinking") or "")
        elif kind == "signature_delta":
            block["signature"] = str(delta.get("signature") or "")
        return []

    def response(self) -> ModelResponse:
        """The assembled response; a stream that never stopped was cut short."""
        if not self.stopped:
            raise IncompleteResponseError("the stream ended before message_stop")
        blocks = [self.blocks[index] for index in sorted(self.blocks)]
        return _with_id(_response(blocks, self.stop_reason, self.usage, self.model), self.id)
