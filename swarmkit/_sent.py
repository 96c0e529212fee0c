"""A model request made fit to show a person: secrets hidden as a journal hides them."""

from __future__ import annotations

from dataclasses import replace
from typing import assert_never

from swarmkit.messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from swarmkit.models import ModelRequest
from swarmkit.redaction import Redactor


def redacted_request(
    request: ModelRequest, redactor: Redactor, done: dict[int, tuple[Message, Message]]
) -> ModelRequest:
    """``request`` with secrets hidden where a journal hides them: JSON under secret keys in
    tool arguments and results, quoted secret pairs in text, secret keys in extra fields.

    ``done`` keeps each message already redacted (by identity): a session's requests share
    their history's messages, so each is redacted once, not once per later call.
    """

    def clean(message: Message) -> Message:
        kept = done.get(id(message))
        if kept is None or kept[0] is not message:
            kept = done[id(message)] = (message, _redacted_message(message, redactor))
        return kept[1]

    tools = tuple(replace(t, description=redactor.in_text(t.description)) for t in request.tools)
    extra = redactor.value(dict(request.settings.extra_body))
    return replace(
        request,
        messages=tuple(clean(m) for m in request.messages),
        tools=tools,
        settings=replace(request.settings, extra_body=extra),
    )


def _redacted_message(message: Message, redactor: Redactor) -> Message:
    match message:
        case SystemMessage() | UserMessage():
            return replace(message, content=redactor.in_text(message.content))
        case AssistantMessage():
            calls = tuple(
                replace(c, arguments=redactor.json_text(c.arguments)) for c in message.tool_calls
            )
            return replace(message, content=redactor.in_text(message.content), tool_calls=calls)
        case ToolMessage():
            content = redactor.in_text(redactor.json_text(message.content))
            return replace(message, content=content)
        case _:
            assert_never(message)
