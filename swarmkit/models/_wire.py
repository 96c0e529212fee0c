"""What the wire dialects share: answer errors, checked JSON, sendable text, settings, assembly."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from swarmkit.models._base import ModelDelta, ModelResponse, ModelSettings


class IncompleteResponseError(ValueError):
    """The server's answer was cut short or lacks a part every answer has (worth a retry)."""


class UnexpectedResponseError(ValueError):
    """The server answered with JSON of the wrong shape, e.g. arguments as an object.

    Not retried: a server that speaks another dialect answers the same way again.
    """


class ErrorAnswerError(ValueError):
    """The server answered with an error object instead of an answer (status 200 or not).

    Retried when the error says it is transient, as an in-stream error event is.
    """

    def __init__(self, message: str, *, body: Mapping[str, Any]) -> None:
        super().__init__(message)
        self.body = body


class StreamAssembly(Protocol):
    """What a dialect's stream assembler does: each streamed object in, its deltas out, and at
    the end the complete response (``IncompleteResponseError`` for a stream cut short)."""

    def add(self, chunk: Mapping[str, Any], /) -> list[ModelDelta]:
        """Take in one streamed object (a chunk or an event) as JSON."""
        ...

    def response(self) -> ModelResponse:
        """The assembled response."""
        ...


def checked_text(value: object, where: str) -> str | None:
    """A string field that may be null; any other JSON type is the server's mistake."""
    if value is None or isinstance(value, str):
        return value
    raise UnexpectedResponseError(f"{where} must be a string or null, got {json_type(value)}")


def checked_count(value: object, where: str) -> int:
    """A token count: a non-negative JSON integer, or null (zero)."""
    if value is None:
        return 0
    if type(value) is int and value >= 0:
        return value
    if type(value) is float and value.is_integer() and 0 <= value < 2**63:
        return int(value)  # some servers count in JSON floats: 12.0
    raise UnexpectedResponseError(f"{where} must be a non-negative integer, got {value!r:.60}")


def cached_count(usage: Mapping[str, Any], details: str, where: str) -> int:
    """The prompt tokens a provider's cache served: ``usage[details].cached_tokens`` (both
    OpenAI APIs report them so), zero when the server says nothing of it."""
    found = usage.get(details)
    if found is None:
        return 0
    place = f"{where}.{details}"
    return checked_count(
        checked_mapping(found, place).get("cached_tokens"), place + ".cached_tokens"
    )


def json_object(answer: object) -> dict[str, Any]:
    """The JSON object a server answered (a response, a chunk or an event); one that answered
    with non-JSON text gives a str, a garbled answer worth another attempt."""
    if not isinstance(answer, dict):
        raise IncompleteResponseError(f"expected a JSON object, got {type(answer).__name__}")
    return answer


def checked_mapping(value: object, where: str) -> Mapping[str, Any]:
    """An object; any other JSON type is the server's mistake."""
    if isinstance(value, Mapping):
        return value
    raise UnexpectedResponseError(f"{where} must be an object, got {json_type(value)}")


def checked_list(value: object, where: str) -> list[Any]:
    """A list that may be null (empty)."""
    if value is None:
        return []
    if isinstance(value, list):
        return value
    raise UnexpectedResponseError(f"{where} must be a list or null, got {json_type(value)}")


def json_type(value: object) -> str:
    match value:
        case bool():
            return "a boolean"
        case int() | float():
            return "a number"
        case str():
            return "a string"
        case list():
            return "a list"
        case Mapping():
            return "an object"
        case None:
            return "null"
        case _:
            return type(value).__name__


_SURROGATE = re.compile("[\ud800-\udfff]")


def sendable(text: str) -> str:
    """Text as the API can take it: each lone surrogate replaced by U+FFFD.

    A Python string may hold lone surrogates (text that is not valid Unicode, e.g. from
    ``surrogateescape``), which cannot be sent as UTF-8. Only the request is changed; the
    journal keeps the text exactly, so replay compares what the run really held.
    """
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub("\ufffd", text)


def plain_json(value: Any) -> Any:
    """A deep copy made of dicts and lists, so read-only mappings and tuples serialise."""
    if isinstance(value, Mapping):
        return {str(key): plain_json(item) for key, item in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [plain_json(item) for item in value]
    return value


def set_only(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The fields that are set: None stands for the server's default and is not sent."""
    return {key: value for key, value in fields.items() if value is not None}


def tool_settings(settings: ModelSettings, forced: Callable[[str], Any]) -> dict[str, Any]:
    """The tool settings both OpenAI APIs take (only beside tools: they reject them alone).
    ``tool_choice``'s ``auto``/``required``/``none`` go as they are; any other string names
    the tool to force, sent as ``forced(name)``."""
    choice = settings.tool_choice
    if choice is not None and choice not in ("auto", "required", "none"):
        choice = forced(choice)
    return {"tool_choice": choice, "parallel_tool_calls": settings.parallel_tool_calls}
