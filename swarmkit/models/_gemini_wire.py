"""The Gemini wire format: our requests as ``google-genai`` contents and config, its answers as
our records, thought signatures kept on the parts they came with."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, assert_never

from google.genai import types

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
    Usage,
)
from swarmkit.models._wire import IncompleteResponseError, plain_json, sendable
from swarmkit.models._wire_cache import ByIdentity

PROVIDER = "google"
"""The name Gemini's state is kept under."""

SKIP_SIGNATURE = b"skip_thought_signature_validator"
"""What Gemini takes as the signature of a function call it did not make (one another
provider's model made before a handoff), so a mixed history stays valid."""

_FILTERED = frozenset({"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII"})


def request_config(request: ModelRequest) -> types.GenerateContentConfig:
    """The generation config: instructions, tools, tool choice, sampling, output schema."""
    settings = request.settings
    system = "\n\n".join(
        sendable(m.content) for m in request.messages if isinstance(m, SystemMessage)
    )
    config = types.GenerateContentConfig(
        system_instruction=system or None,
        temperature=settings.temperature,
        top_p=settings.top_p,
        max_output_tokens=settings.max_tokens,
        seed=settings.seed,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    if request.tools:
        declarations = [
            types.FunctionDeclaration(
                name=spec.name,
                description=spec.description,
                parameters_json_schema=plain_json(spec.parameters),
            )
            for spec in request.tools
        ]
        config.tools = [types.Tool(function_declarations=declarations)]
        config.tool_config = tool_config(settings)
    if request.output_schema is not None:
        config.response_mime_type = "application/json"
        config.response_json_schema = plain_json(request.output_schema.schema)
    return config


def tool_config(settings: ModelSettings) -> types.ToolConfig | None:
    """``auto``/``required``/``none`` as the modes AUTO/ANY/NONE; a name as ANY of that one."""
    choice = settings.tool_choice
    if choice is None:
        return None
    modes = {"auto": "AUTO", "required": "ANY", "none": "NONE"}
    if choice in modes:
        calling = types.FunctionCallingConfig(mode=modes[choice])
    else:
        calling = types.FunctionCallingConfig(mode="ANY", allowed_function_names=[choice])
    return types.ToolConfig(function_calling_config=calling)


def contents(messages: Sequence[Message]) -> list[types.Content]:
    """The turns after the instructions; consecutive turns of one role become one (a turn's
    function responses go back together). Each message's turn is built once in its life."""
    turns: list[types.Content] = []
    named: set[str] = set()  # ids Gemini gave its calls: their responses quote them
    for message in messages:
        if isinstance(message, AssistantMessage):
            named.update(c.id for c in message.tool_calls if _gemini_named(c))
        turn = _cached_content(message, named)
        if turn is None:
            continue
        if turns and turns[-1].role == turn.role:
            # A new turn: the cached ones are shared by every later call.
            parts = [*(turns[-1].parts or []), *(turn.parts or [])]
            turns[-1] = types.Content(role=turn.role, parts=parts)
        else:
            turns.append(turn)
    return turns


_CONTENTS: ByIdentity[types.Content | None] = ByIdentity()


def _cached_content(message: Message, named: set[str]) -> types.Content | None:
    if isinstance(message, SystemMessage):
        return None  # new each call, and sent in the config
    found = _CONTENTS.find(message)
    if found is None:
        found = content_of(message, named=named)
        _CONTENTS.put(message, found)
    return found


def _gemini_named(call: ToolCall) -> bool:
    """Whether Gemini gave this call its id (another model's call goes without one)."""
    state = call.provider_state
    return state is not None and state.provider == PROVIDER and bool(state.data.get("id"))


def content_of(
    message: Message, *, named: set[str] | frozenset[str] = frozenset()
) -> types.Content | None:
    """One message as a turn (None for the instructions, sent in the config); a function
    response quotes its call's id when Gemini gave the call one (``named``)."""
    match message:
        case SystemMessage():
            return None
        case UserMessage(content=content):
            return types.Content(role="user", parts=[types.Part(text=sendable(content))])
        case AssistantMessage():
            parts = model_parts(message)
            return types.Content(role="model", parts=parts) if parts else None
        case ToolMessage():
            key = "error" if message.is_error else "result"
            response = types.FunctionResponse(
                id=message.tool_call_id if message.tool_call_id in named else None,
                name=message.name,
                response={key: sendable(message.content)},
            )
            return types.Content(role="user", parts=[types.Part(function_response=response)])
        case _:
            assert_never(message)


def model_parts(message: AssistantMessage) -> list[types.Part]:
    """A model turn: its parts as Gemini gave them when it did (thoughts and signatures
    included), else its text; then each call with its own signature."""
    state = message.provider_state
    parts: list[types.Part] = []
    if state is not None and state.provider == PROVIDER:
        parts.extend(_part_from_data(data) for data in state.data.get("parts", ()))
    elif message.content:
        parts.append(types.Part(text=sendable(message.content)))
    parts.extend(_call_part(call) for call in message.tool_calls)
    return parts


def _call_part(call: ToolCall) -> types.Part:
    try:
        arguments = json.loads(call.arguments) if call.arguments else {}
    except ValueError:
        arguments = {}
    state = call.provider_state
    own = state is not None and state.provider == PROVIDER
    data = state.data if state is not None and own else {}
    function_call = types.FunctionCall(
        id=call.id if _gemini_named(call) else None,
        name=call.name,
        args=arguments if isinstance(arguments, dict) else {},
    )
    signature = data.get("thought_signature")
    return types.Part(
        function_call=function_call,
        thought_signature=base64.b64decode(signature) if signature else _foreign(own),
    )


def _foreign(own: bool) -> bytes | None:
    # A call Gemini made without a signature goes back without one; another model's call
    # gets the documented stand-in.
    return None if own else SKIP_SIGNATURE


def _part_from_data(data: Any) -> types.Part:
    kept = dict(data)
    signature = kept.pop("thought_signature", None)
    part = types.Part(**kept)
    if signature:
        part.thought_signature = base64.b64decode(signature)
    return part


_SYNTHETIC = "gemini_call_"


def parse_response(response: types.GenerateContentResponse) -> ModelResponse:
    """A complete answer as our response."""
    candidates = response.candidates or []
    if not candidates:
        raise IncompleteResponseError("the answer holds no candidates")
    candidate = candidates[0]
    parts = (candidate.content.parts if candidate.content else None) or []
    return _response(parts, candidate.finish_reason, response.usage_metadata, response)


def _response(
    parts: Sequence[types.Part],
    finish: object,
    usage: types.GenerateContentResponseUsageMetadata | None,
    answer: types.GenerateContentResponse | None,
    made: Sequence[ToolCall] | None = None,
) -> ModelResponse:
    text = "".join(p.text for p in parts if p.text and not p.thought and p.function_call is None)
    calls = tuple(made if made is not None else (call_of(p) for p in parts if p.function_call))
    kept = [_part_data(p) for p in parts if p.function_call is None]
    signed = any(p.thought_signature or p.thought for p in parts if p.function_call is None)
    state = ProviderState(provider=PROVIDER, data={"parts": kept}) if signed else None
    return ModelResponse(
        message=AssistantMessage(content=text or None, tool_calls=calls, provider_state=state),
        usage=parse_usage(usage),
        finish_reason=finish_reason(finish, has_calls=bool(calls)),
        model=answer.model_version if answer is not None else None,
        id=answer.response_id if answer is not None else None,
    )


def call_of(part: types.Part) -> ToolCall:
    """A function call with its thought signature (and the id Gemini gave it, if it did)."""
    function_call = part.function_call
    assert function_call is not None
    data: dict[str, Any] = {}
    if function_call.id:
        data["id"] = True
    if part.thought_signature:
        data["thought_signature"] = base64.b64encode(part.thought_signature).decode()
    return ToolCall(
        id=function_call.id or f"{_SYNTHETIC}{uuid.uuid4().hex[:16]}",
        name=function_call.name or "",
        arguments=json.dumps(function_call.args or {}, ensure_ascii=False),
        # Always marked as Gemini's, so it never gets the stand-in meant for another's call.
        provider_state=ProviderState(provider=PROVIDER, data=data),
    )


def _part_data(part: types.Part) -> dict[str, Any]:
    data = part.model_dump(mode="json", exclude_none=True)
    if part.thought_signature:
        data["thought_signature"] = base64.b64encode(part.thought_signature).decode()
    return dict(data)


def finish_reason(raw: object, *, has_calls: bool) -> str | None:
    """The Chat Completions name of why the answer ended."""
    name = getattr(raw, "value", raw)
    if name is None:
        return None
    if name == "STOP":
        return "tool_calls" if has_calls else "stop"
    if name == "MAX_TOKENS":
        return "length"
    return "content_filter" if name in _FILTERED else str(name).lower()


def parse_usage(raw: types.GenerateContentResponseUsageMetadata | None) -> Usage:
    """Token counts; the model's thinking counts as completion tokens."""
    if raw is None:
        return Usage(reported=False)
    prompt = raw.prompt_token_count or 0
    completion = (raw.candidates_token_count or 0) + (raw.thoughts_token_count or 0)
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=raw.total_token_count or prompt + completion,
        cache_read_tokens=raw.cached_content_token_count or 0,
    )


@dataclass(kw_only=True, slots=True)
class StreamAssembler:
    """Turns streamed chunks into deltas and, at the end, the complete response."""

    parts: list[types.Part] = field(default_factory=list)
    """Every part so far (text parts as they came, calls whole)."""
    finish: object = None
    """The finish reason, once a chunk said it."""
    usage: types.GenerateContentResponseUsageMetadata | None = None
    """The latest usage."""
    last: types.GenerateContentResponse | None = None
    """The latest chunk."""
    calls: list[ToolCall] = field(default_factory=list)
    """The calls so far, each made once (a call without an id gets one here)."""

    def add(self, chunk: types.GenerateContentResponse) -> list[ModelDelta]:
        """Take in one chunk; return its deltas."""
        self.last = chunk
        self.usage = chunk.usage_metadata or self.usage
        candidates = chunk.candidates or []
        if not candidates:
            return []
        candidate = candidates[0]
        self.finish = candidate.finish_reason or self.finish
        deltas: list[ModelDelta] = []
        for part in (candidate.content.parts if candidate.content else None) or []:
            self.parts.append(part)
            if part.function_call is not None:
                call = call_of(part)
                index = len(self.calls)
                self.calls.append(call)
                deltas.append(
                    ToolCallDelta(index=index, id=call.id, name=call.name, arguments=call.arguments)
                )
            elif part.text and not part.thought:
                deltas.append(TextDelta(text=part.text))
        return deltas

    def response(self) -> ModelResponse:
        """The assembled response; a stream that never gave a finish reason was cut short."""
        if self.finish is None:
            raise IncompleteResponseError("the stream ended without a finish reason")
        return _response(_joined(self.parts), self.finish, self.usage, self.last, self.calls)


def _joined(parts: list[types.Part]) -> list[types.Part]:
    """Consecutive plain text pieces as one part (a signature stays on its own part)."""
    joined: list[types.Part] = []
    for part in parts:
        previous = joined[-1] if joined else None
        if (
            previous is not None
            and part.text is not None
            and previous.text is not None
            and part.function_call is None
            and not part.thought_signature
            and bool(part.thought) == bool(previous.thought)
        ):
            joined[-1] = previous.model_copy(update={"text": previous.text + part.text})
        else:
            joined.append(part)
    return joined
