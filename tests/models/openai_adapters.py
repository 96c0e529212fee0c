"""Both OpenAI adapters, each with the replies of its wire format, for the tests both must pass."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from swarmkit.models import OpenAIModel, OpenAIResponsesModel
from tests.models import fake_responses as responses
from tests.models.fake_openai import (
    MODEL,
    FakeAPI,
    broken_sse,
    call_piece,
    chunk,
    completion,
    fake_api,
    sse,
    tool_call_json,
)

Call = tuple[str, str, str]
"""A tool call the server answers with: its id, name and arguments."""


@dataclass(frozen=True, kw_only=True)
class Adapter:
    """One OpenAI adapter: how to wire it to a fake server, and that server's replies."""

    name: str
    """The test id."""
    model_class: type[OpenAIModel]
    """The adapter's class."""
    path: str
    """The endpoint it posts to."""
    fake: Callable[..., FakeAPI]
    """A model whose HTTP calls get the given replies in turn (keywords as ``fake_api``)."""
    answer: Callable[..., httpx.Response]
    """A 200 text answer (``usage=(prompt, completion)``, 12 and 5 by default)."""
    calls_answer: Callable[[Sequence[Call]], httpx.Response]
    """A 200 answer of tool calls only."""
    plain_body: Mapping[str, Any]
    """The whole body sent for one user message, "Hi", with no tools or settings."""
    stream_fields: Mapping[str, Any]
    """The fields a streamed request adds to the body."""
    log_fields: Mapping[str, str]
    """What the adapter adds to its ``model_call_finished`` log event."""
    hello: Callable[[], httpx.Response]
    """A stream of "Hel" and "lo" that finishes with usage 9 + 2."""
    cut: Callable[[], httpx.Response]
    """A stream of "Hel" that ends before it says it has finished."""
    garbled: Callable[[], httpx.Response]
    """A stream of "Hel", then an event that is not JSON."""
    dropped: Callable[[], httpx.Response]
    """A stream of "Hel", then the connection is lost."""
    call_stream: Callable[..., httpx.Response]
    """A stream of one tool call (id, name, argument pieces) that finishes."""


def _chat_calls_answer(calls: Sequence[Call]) -> httpx.Response:
    json_calls = [tool_call_json(*call) for call in calls]
    return completion(None, tool_calls=json_calls, finish_reason="tool_calls")


def _chat_call_stream(call_id: str, name: str, first: str, *rest: str) -> httpx.Response:
    opened = chunk(tool_calls=[call_piece(0, call_id=call_id, name=name, arguments=first)])
    pieces = [chunk(tool_calls=[call_piece(0, arguments=piece)]) for piece in rest]
    return sse(opened, *pieces, chunk(finish_reason="tool_calls"))


CHAT = Adapter(
    name="chat",
    model_class=OpenAIModel,
    path="/chat/completions",
    fake=fake_api,
    answer=completion,
    calls_answer=_chat_calls_answer,
    plain_body={"model": MODEL, "messages": [{"role": "user", "content": "Hi"}], "stream": False},
    stream_fields={"stream": True, "stream_options": {"include_usage": True}},
    log_fields={},
    hello=lambda: sse(
        chunk(content="Hel"),
        chunk(content="lo"),
        chunk(finish_reason="stop"),
        chunk(choices=False, usage=(9, 2)),
    ),
    cut=lambda: sse(chunk(content="Hel"), done=False),
    garbled=lambda: sse(chunk(content="Hel"), '{"id": "chatcmpl-1", "choi'),
    dropped=lambda: broken_sse(chunk(content="Hel")),
    call_stream=_chat_call_stream,
)

RESPONSES = Adapter(
    name="responses",
    model_class=OpenAIResponsesModel,
    path="/responses",
    fake=responses.fake_responses_api,
    answer=responses.answer,
    calls_answer=lambda calls: responses.answer(
        None, calls=[responses.call_item(*call) for call in calls]
    ),
    plain_body={"model": MODEL, "input": [{"role": "user", "content": "Hi"}]},
    stream_fields={"stream": True},
    log_fields={"api": "responses"},
    hello=lambda: responses.event_stream(
        *responses.text_events("Hel", "lo"), responses.completed(responses.message_item("Hello"))
    ),
    cut=lambda: responses.event_stream(*responses.text_events("Hel")),
    garbled=lambda: responses.event_stream(*responses.text_events("Hel"), '{"type": "resp'),
    dropped=lambda: responses.broken_event_stream(*responses.text_events("Hel")),
    call_stream=lambda call_id, name, *pieces: responses.event_stream(
        *responses.call_events(0, call_id, name, *pieces), responses.completed()
    ),
)

ADAPTERS = (CHAT, RESPONSES)
"""Every OpenAI adapter."""
