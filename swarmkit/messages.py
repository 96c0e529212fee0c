"""The records a conversation is made of: messages, tool calls and tool results."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter


@dataclass(frozen=True, kw_only=True, slots=True)
class ProviderState:
    """What a provider returned that only it can read (signatures, reasoning), kept verbatim.

    An adapter sends it back only to the API that made it (``provider``); any other adapter
    leaves it out, so a conversation moves between providers and stays valid for each.
    """

    provider: str
    """The API that made it: ``anthropic``, ``google``, ``openai`` (Chat Completions) or
    ``openai-responses``."""
    data: Mapping[str, Any]
    """Its JSON, exactly as the API returned it."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Reasoning:
    """What a provider showed of a model call's reasoning: the readable part (thinking text,
    reasoning summaries, thoughts) and the opaque part, passed on and never decrypted."""

    texts: tuple[str, ...] = ()
    """The reasoning the provider let us read, one entry per block, summary or thought."""
    encrypted: tuple[str, ...] = ()
    """Opaque artefacts only the provider reads (signatures, encrypted content, redacted
    thinking), as it sent them."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCall:
    """A model's request to call one tool."""

    id: str
    """The id the model gave the call; its result must quote it."""
    name: str
    """The tool's name, as the model wrote it (it may name no real tool)."""
    arguments: str
    """The arguments as the raw JSON text the model produced (it may be malformed)."""
    provider_state: ProviderState | None = None
    """State the provider tied to this call (a thought signature), sent back with it."""


# Messages can be weakly referenced so the model adapters can keep each one's wire form
# exactly as long as the message lives (swarmkit/models/_wire_cache.py).
@dataclass(frozen=True, kw_only=True, slots=True, weakref_slot=True)
class SystemMessage:
    """Instructions for the model."""

    content: str
    """The instruction text."""
    kind: Literal["system"] = "system"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True, weakref_slot=True)
class UserMessage:
    """Input from the user (or a prompt built for a receiving agent)."""

    content: str
    """The text."""
    kind: Literal["user"] = "user"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True, weakref_slot=True)
class AssistantMessage:
    """What a model said: text, tool calls, or both."""

    content: str | None = None
    """The text, or None when the model only called tools."""
    tool_calls: tuple[ToolCall, ...] = ()
    """The tool calls, in the order the model made them."""
    agent: str | None = None
    """The agent that spoke, when known; not sent to the model."""
    provider_state: ProviderState | None = None
    """Reasoning state the provider returned with this turn (signed thinking blocks, reasoning
    items), sent back to that provider only."""
    kind: Literal["assistant"] = "assistant"
    """Discriminator."""


@dataclass(frozen=True, kw_only=True, slots=True, weakref_slot=True)
class ToolMessage:
    """The result of one tool call, sent back to the model."""

    tool_call_id: str
    """The id of the call this answers."""
    name: str
    """The tool's name."""
    content: str
    """The result as text (an error description when the call failed)."""
    is_error: bool = False
    """Whether the call failed; not sent to the model."""
    kind: Literal["tool"] = "tool"
    """Discriminator."""


Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage
"""Any message of a conversation."""


def messages_to_data(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Messages as plain JSON data (each with its ``kind``), e.g. to store a conversation."""
    return list(_MESSAGES.dump_python(list(messages), mode="json"))


def messages_from_data(data: Sequence[Message | Mapping[str, Any]]) -> tuple[Message, ...]:
    """Messages back from [messages_to_data][swarmkit.messages.messages_to_data] (messages already
    made pass through)."""
    return tuple(_MESSAGES.validate_python(list(data)))


_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(
    list[Annotated[Message, Field(discriminator="kind")]]
)
