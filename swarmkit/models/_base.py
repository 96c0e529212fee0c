"""The Model protocol the run loop talks to, and the request/response records it exchanges."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from swarmkit.exceptions import ConfigurationError
from swarmkit.messages import AssistantMessage, Message


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolSpec:
    """A tool as offered to a model: a name, what it is for, and its JSON schema."""

    name: str
    """The tool name the model calls (``^[a-zA-Z0-9_-]{1,64}$``)."""
    description: str
    """What the tool does, for the model."""
    parameters: Mapping[str, Any]
    """The JSON schema of the arguments object."""
    strict: bool = False
    """Whether the schema is valid for OpenAI strict mode and should be sent as such."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelSettings:
    """Sampling and tool-use settings for one agent's model calls; None means the API default."""

    temperature: float | None = None
    """Sampling temperature."""
    top_p: float | None = None
    """Nucleus sampling mass."""
    max_tokens: int | None = None
    """Cap on completion tokens."""
    tool_choice: Literal["auto", "required", "none"] | str | None = None
    """Whether the model may (``auto``), must (``required``) or must not (``none``) call tools;
    any other string is the name of the one tool it must call."""
    parallel_tool_calls: bool | None = None
    """Whether the model may call several tools in one turn (sent only when tools are offered)."""
    seed: int | None = None
    """Sampling seed, where the server honours one."""
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    """Extra JSON fields for OpenAI-compatible servers that accept more."""

    def __post_init__(self) -> None:
        for name in ("temperature", "top_p"):
            value = getattr(self, name)
            if value is not None and not _is_finite_number(value):
                _refuse(name, value, "a number such as 0.7, or None")
        for name, least in (("max_tokens", 1), ("seed", None)):
            value = getattr(self, name)
            if value is not None and (type(value) is not int or (least and value < least)):
                _refuse(name, value, "a whole number" + (" of 1 or more" if least else ""))
        if self.tool_choice is not None and (
            not isinstance(self.tool_choice, str) or not self.tool_choice
        ):
            _refuse(
                "tool_choice", self.tool_choice, "'auto', 'required', 'none', a tool's name or None"
            )
        if self.parallel_tool_calls not in (None, True, False):
            _refuse("parallel_tool_calls", self.parallel_tool_calls, "True, False or None")
        if not isinstance(self.extra_body, Mapping) or not all(
            isinstance(key, str) for key in self.extra_body
        ):
            _refuse("extra_body", self.extra_body, "a dict of JSON fields with str keys")


def _is_finite_number(value: object) -> bool:
    return type(value) in (int, float) and math.isfinite(value)  # type: ignore[arg-type]


def _refuse(name: str, value: object, expected: str) -> None:
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    raise ConfigurationError(f"ModelSettings({name}=...) must be {expected}; got {shown}")


@dataclass(frozen=True, kw_only=True, slots=True)
class OutputSchema:
    """The JSON schema a final answer must follow, sent as structured output where supported."""

    name: str
    """The schema's name (the output type's name)."""
    schema: Mapping[str, Any]
    """The JSON schema of the answer object."""
    strict: bool = False
    """Whether the schema is valid for OpenAI strict mode and should be sent as such."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelRequest:
    """Everything one model call needs: the conversation, the tools and the settings."""

    messages: tuple[Message, ...]
    """The conversation, system instructions first."""
    tools: tuple[ToolSpec, ...] = ()
    """The tools the model may call."""
    settings: ModelSettings = field(default_factory=ModelSettings)
    """Sampling and tool-use settings."""
    agent: str = ""
    """The agent this call is for (for scripted models and logs; not sent to the API)."""
    output_schema: OutputSchema | None = None
    """The schema the final answer must follow, sent as the API's structured output (None for
    an agent without an ``output_type``, or one whose server does not support it)."""
    handoff_payload: Mapping[str, Any] | None = None
    """The validated payload of the typed handoff that brought the agent in, as JSON data
    (None without one). The instructions already quote it as text; a model that can send data
    of its own, such as a remote A2A agent, sends this. Not part of the request's digest."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Usage:
    """Token counts of one or more model calls."""

    prompt_tokens: int = 0
    """Tokens in the prompts."""
    completion_tokens: int = 0
    """Tokens the model generated."""
    total_tokens: int = 0
    """Their sum, as the API reported it."""
    reported: bool = True
    """False when a call's usage is unknown (a stream that never said): the counts are a floor."""
    cache_read_tokens: int = 0
    """Prompt tokens served from the provider's prompt cache (part of ``prompt_tokens``)."""
    cache_write_tokens: int = 0
    """Prompt tokens written to the provider's prompt cache (part of ``prompt_tokens``)."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            reported=self.reported and other.reported,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelResponse:
    """A model's complete answer to one request."""

    message: AssistantMessage
    """What the model said: text and/or tool calls."""
    usage: Usage = field(default_factory=Usage)
    """Tokens this call used."""
    finish_reason: str | None = None
    """Why the model stopped (``stop``, ``tool_calls``, ``length`` ...)."""
    model: str | None = None
    """The model name the server reported."""
    id: str | None = None
    """The provider's id for this answer (``chatcmpl-...``, ``resp_...``, ``msg_...``), when it
    gave one; traces show it as ``gen_ai.response.id``."""


@dataclass(frozen=True, kw_only=True, slots=True)
class TextDelta:
    """A piece of the answer's text, as it streams."""

    text: str
    """The new text."""
    kind: Literal["text"] = "text"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallDelta:
    """A piece of a tool call, as it streams; pieces with one index form one call."""

    index: int
    """Which call of the turn this piece belongs to."""
    id: str | None = None
    """The call id, on the piece that carries it."""
    name: str | None = None
    """The tool name, on the piece that carries it."""
    arguments: str = ""
    """The next fragment of the arguments' JSON text."""
    kind: Literal["tool_call"] = "tool_call"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True)
class AttemptDiscarded:
    """A streamed attempt failed and another starts from scratch: drop what it yielded so far.

    The deltas after this marker are the next attempt's; only the last attempt's deltas join
    to the response.
    """

    attempt: int
    """The number (1-based) of the attempt whose deltas are void."""
    reason: str
    """Why it failed, as a short stable name (``timeout_stream_gap``, ``http_503`` ...)."""
    kind: Literal["attempt_discarded"] = "attempt_discarded"
    """Discriminator."""


ModelDelta = TextDelta | ToolCallDelta | AttemptDiscarded
"""A streamed piece of a model's answer, or the notice that the pieces so far are void."""


@runtime_checkable
class Model(Protocol):
    """Anything that answers a model request: the OpenAI adapter, a scripted model, a replay.

    A model may also declare ``name`` (the model it asks for) and ``provider`` (who serves it,
    as traces name it in ``gen_ai.provider.name``, e.g. ``openai`` or ``anthropic``); a model
    that declares no provider is traced as ``_OTHER``.
    """

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """Answer one request with a complete response."""
        ...


@runtime_checkable
class StreamingModel(Model, Protocol):
    """A model that can also stream: deltas as they arrive, then the complete response last."""

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta | ModelResponse]:
        """Yield deltas as they arrive and the assembled response as the last item."""
        ...
