"""The records a conversation is made of: messages, tool calls and tool results."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from swarmkit.conditions import message_words
from swarmkit.redaction import REDACTED


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
    return list(_messages().dump_python(list(messages), mode="json"))


def messages_from_data(data: Sequence[Message | Mapping[str, Any]]) -> tuple[Message, ...]:
    """Messages back from [messages_to_data][swarmkit.messages.messages_to_data] (messages already
    made pass through)."""
    return tuple(_messages().validate_python(list(data)))


@functools.cache
def _messages() -> TypeAdapter[list[Message]]:
    """The messages' validator, built on first use (building it costs a program's start)."""
    return TypeAdapter(list[Annotated[Message, Field(discriminator="kind")]])


USER_MESSAGE_FACT = "user_message"
"""The fact under ``swarm`` holding the user's latest message, raw."""
USER_WORDS_FACT = "user_words"
"""The fact under ``swarm`` holding its words: lower case, each once, in order of appearance."""


def message_facts(text: object) -> dict[str, Any]:
    """What rules see of the user's latest message: ``user_message`` (the raw text) and
    ``user_words`` (its words, as ``swarmkit.conditions`` splits them). Both are null when
    there is no text, or when the text holds a redacted value (``[redacted]``): a rule never
    decides on text that a replay, the viewer or the rule learner could not see."""
    if not isinstance(text, str) or REDACTED in text:
        return {USER_MESSAGE_FACT: None, USER_WORDS_FACT: None}
    return {USER_MESSAGE_FACT: text, USER_WORDS_FACT: _words_of(text)}


# The loop consults rules before every model call of a run, on the same message each time.
_words_of = functools.lru_cache(maxsize=256)(message_words)
