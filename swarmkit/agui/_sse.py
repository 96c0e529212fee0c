"""A run's AG-UI events as the SSE messages the endpoint sends, written directly.

The events every run has (its start, steps, state, text and end) are written as text from
templates, each string value JSON-encoded once; any other event is its JSON object encoded.
Either way the message is byte for byte what encoding ``ag_ui_events``' object gives (the
tests hold both forms to that). The endpoint has the run itself write the pieces of its
answer (``SseStream.text``): most of a streamed run's messages are made where the run makes
its text, with no event built for them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterable, Callable, Mapping, Sequence
from json.encoder import encode_basestring
from typing import Any, cast

from ag_ui.core import PROTOCOL_VERSION

from swarmkit.agui._convert import Translator
from swarmkit.agui._usage import UsageTally
from swarmkit.agui._wire import Wire
from swarmkit.events import Event, TextDelta
from swarmkit.exceptions import SwarmkitError
from swarmkit.redaction import Redactor

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""The JSON encoding of an event's object: compact, non-ASCII text as it is."""
_string = encode_basestring
"""A string as JSON (what ``_ENCODER`` writes for one)."""
_VERSION = _string(PROTOCOL_VERSION)


def sse(wire: Wire) -> str:
    """One event's JSON object as an SSE message."""
    return f"data: {_ENCODER.encode(wire)}\n\n"


class SseMessages:
    """Events as SSE messages (``data: <the event's JSON>`` and a blank line)."""

    def event(self, wire: Wire) -> str:
        return sse(wire)

    def run_started(self, thread_id: str, run_id: str, session_id: str) -> str:
        return (
            f'data: {{"type":"RUN_STARTED","threadId":{_string(thread_id)},'
            f'"runId":{_string(run_id)},"protocolVersion":{_VERSION},'
            f'"metadata":{{"session_id":{_string(session_id)}}}}}\n\n'
        )

    def step_started(self, name: str) -> str:
        return f'data: {{"type":"STEP_STARTED","stepName":{_string(name)}}}\n\n'

    def step_finished(self, name: str) -> str:
        return f'data: {{"type":"STEP_FINISHED","stepName":{_string(name)}}}\n\n'

    def state(self, agent: str, trail: Sequence[str]) -> str:
        return (
            f'data: {{"type":"STATE_SNAPSHOT","snapshot":{{"agent":{_string(agent)},'
            f'"trail":{_strings(trail)}}}}}\n\n'
        )

    def final_state(self, agent: str, trail: Sequence[str], context: Mapping[str, Any]) -> str:
        given = _ENCODER.encode(dict(context)) if context else "{}"
        return (
            f'data: {{"type":"STATE_SNAPSHOT","snapshot":{{"agent":{_string(agent)},'
            f'"trail":{_strings(trail)},"context":{given}}}}}\n\n'
        )

    def text_start(self, message_id: str, agent: str) -> str:
        return (
            f'data: {{"type":"TEXT_MESSAGE_START","messageId":{_string(message_id)},'
            f'"role":"assistant","name":{_string(agent)}}}\n\n'
        )

    def text(self, message_id: str, delta: str) -> str:
        return f"{_text_head(message_id)}{_string(delta)}}}\n\n"

    def text_end(self, message_id: str) -> str:
        return f'data: {{"type":"TEXT_MESSAGE_END","messageId":{_string(message_id)}}}\n\n'

    def run_finished(self, thread_id: str, run_id: str, result: str, usage: UsageTally) -> str:
        entries = usage.entries_json()
        used = "" if entries is None else f',"usage":{entries}'
        return (
            f'data: {{"type":"RUN_FINISHED","threadId":{_string(thread_id)},'
            f'"runId":{_string(run_id)},"result":{_string(result)},'
            f'"outcome":{{"type":"success"}}{used}}}\n\n'
        )


SSE_MESSAGES = SseMessages()
"""The SSE form (what the endpoint sends)."""


def _strings(values: Sequence[str]) -> str:
    return f"[{','.join(map(_string, values))}]"


def _text_head(message_id: str) -> str:
    """A TEXT_MESSAGE_CONTENT message up to its delta."""
    return f'data: {{"type":"TEXT_MESSAGE_CONTENT","messageId":{_string(message_id)},"delta":'


def ag_ui_sse(
    events: AsyncIterable[Event],
    *,
    thread_id: str,
    run_id: str,
    new_id: Callable[[], str] | None = None,
    redactor: Redactor | None = None,
) -> AsyncGenerator[str, None]:
    """The AG-UI events of a run as the SSE messages ``AgUiServer`` sends, each
    ``data: <the event's JSON>`` and a blank line: ``ag_ui_events``' objects, written
    directly. A swarmkit error the run raises once the stream has begun ends it with
    RUN_ERROR (``code``: the error's type), the only way the protocol can still tell it.
    Secret values are hidden as in ``ag_ui_events``."""
    stream = SseStream(thread_id=thread_id, run_id=run_id, new_id=new_id, redactor=redactor)
    return stream.messages(events)


class SseStream:
    """One run's AG-UI events as SSE messages: its translator, and the writer of its text
    that the endpoint hands the run (``stream_written``), so a piece of the answer is its
    SSE message where the run makes it, with no event built and no converter between."""

    def __init__(
        self,
        *,
        thread_id: str,
        run_id: str,
        new_id: Callable[[], str] | None,
        redactor: Redactor | None,
    ) -> None:
        self._translator = Translator(
            SSE_MESSAGES,
            thread_id=thread_id,
            run_id=run_id,
            new_id=new_id,
            subagent_run_id=None,
            redactor=redactor,
        )
        self._message: str | None = None
        self._head = ""
        """The open message's TEXT_MESSAGE_CONTENT up to its delta (kept: most messages are
        pieces of one message)."""

    def text(self, agent: str, delta: str) -> str:
        """A piece of the answer as its TEXT_MESSAGE_CONTENT message; the first piece of a
        message comes after its TEXT_MESSAGE_START, in the same string."""
        message = self._translator._message
        if message is None:
            return "".join(self._translator.convert(TextDelta(agent=agent, text=delta)))
        if message is not self._message:
            self._message, self._head = message, _text_head(message)
        return f"{self._head}{_string(delta)}}}\n\n"

    async def messages(self, events: AsyncIterable[Event | str]) -> AsyncGenerator[str, None]:
        """The SSE messages of a run's events, one a string, where a piece of text that
        ``text`` wrote is already its message (the first of a message, two)."""
        translator = self._translator
        convert, delta, string = translator.convert, TextDelta, _string
        message: str | None = None
        head = ""
        try:
            async for event in events:
                if type(event) is str:
                    yield event  # a piece of text ``text`` wrote
                elif type(event) is delta and translator._message is not None:
                    # A streamed run's text as events (``ag_ui_sse``, or observers read them).
                    if translator._message is not message:
                        message = translator._message
                        head = _text_head(message)
                    yield f"{head}{string(event.text)}}}\n\n"
                else:
                    for converted in convert(cast(Event, event)):  # not a str: an event
                        yield converted
        except SwarmkitError as exc:
            yield sse(
                {"type": "RUN_ERROR", "message": _first_line(exc), "code": type(exc).__name__}
            )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
