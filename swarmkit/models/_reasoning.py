"""The reasoning a provider returned with a turn, read from the state its adapter kept."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from swarmkit.messages import AssistantMessage, ProviderState, Reasoning


def reasoning_of(message: AssistantMessage) -> Reasoning | None:
    """The reasoning ``message`` carries (None when its provider returned none)."""
    states = [message.provider_state] + [call.provider_state for call in message.tool_calls]
    texts: list[str] = []
    encrypted: list[str] = []
    for state in states:
        if state is not None:
            for readable, value in _pieces(state):
                (texts if readable else encrypted).append(value)
    if not texts and not encrypted:
        return None
    return Reasoning(texts=tuple(texts), encrypted=tuple(encrypted))


def _pieces(state: ProviderState) -> Iterator[tuple[bool, str]]:
    """(readable, value) for each piece of reasoning in a provider's kept state."""
    data = state.data
    match state.provider:
        case "anthropic":
            for block in _objects(data.get("blocks")):
                yield from _text(block.get("thinking"))
                yield from _opaque(block.get("signature"), block.get("data"))
        case "openai-responses":
            for item in _objects(data.get("items")):
                for part in _objects(item.get("summary")) + _objects(item.get("content")):
                    yield from _text(part.get("text"))
                yield from _opaque(item.get("encrypted_content"))
        case "google":
            for part in _objects(data.get("parts")) or [data]:
                if part.get("thought"):
                    yield from _text(part.get("text"))
                yield from _opaque(part.get("thought_signature"))
        case "openai":
            yield from _chat_completions(data)
        case _:
            return


def _chat_completions(data: Mapping[str, Any]) -> Iterator[tuple[bool, str]]:
    """Reasoning servers that speak Chat Completions: a reasoning text field, or details."""
    yield from _text(data.get("reasoning_content") or data.get("reasoning"))
    for detail in _objects(data.get("reasoning_details")):
        yield from _text(detail.get("text") or detail.get("summary"))
        yield from _opaque(detail.get("data"), detail.get("signature"))
    extra = data.get("extra_content")
    google = extra.get("google") if isinstance(extra, Mapping) else None
    if isinstance(google, Mapping):
        yield from _opaque(google.get("thought_signature"))


def _objects(value: object) -> list[Mapping[str, Any]]:
    if not isinstance(value, list | tuple):
        return []
    return [item for item in value if isinstance(item, Mapping)]


def _text(value: object) -> Iterator[tuple[bool, str]]:
    if isinstance(value, str) and value:
        yield True, value


def _opaque(*values: object) -> Iterator[tuple[bool, str]]:
    for value in values:
        if isinstance(value, str) and value:
            yield False, value
