"""OpenAIResponsesModel.stream: what only the Responses API streams (what both adapters share
is in test_openai_stream.py)."""

from __future__ import annotations

from swarmkit.messages import ToolCall, UserMessage
from swarmkit.models import (
    AttemptDiscarded,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    TextDelta,
    ToolCallDelta,
)
from tests.models.fake_openai import FakeAPI
from tests.models.fake_responses import (
    call_events,
    call_item,
    completed,
    event_stream,
    fake_responses_api,
    message_item,
    text_events,
)

REQUEST = ModelRequest(messages=(UserMessage(content="Hi"),))

HELLO = event_stream(*text_events("Hel", "lo"), completed(message_item("Hello")))


async def collect(api: FakeAPI) -> tuple[list[ModelDelta], ModelResponse]:
    """The deltas of a stream's successful attempt (a retry discards the partial one before
    it), and the response it ends with (which must come last)."""
    *items, last = [item async for item in api.model.stream(REQUEST)]
    assert isinstance(last, ModelResponse)
    deltas: list[ModelDelta] = []
    for item in items:
        if isinstance(item, AttemptDiscarded):
            deltas = []
        else:
            assert isinstance(item, TextDelta | ToolCallDelta)
            deltas.append(item)
    return deltas, last


async def test_function_call_arguments_stream_as_deltas_and_are_assembled() -> None:
    """Two calls' argument pieces stream as deltas by call index; the response holds them whole."""
    api = fake_responses_api(
        event_stream(
            *call_events(0, "c1", "get_weather", '{"city":', '"Oslo"}'),
            *call_events(1, "c2", "get_time", "{}"),
            completed(call_item("c1", "get_weather", '{"city":"Oslo"}')),
        )
    )

    deltas, response = await collect(api)

    assert deltas == [
        ToolCallDelta(index=0, id="c1", name="get_weather", arguments=""),
        ToolCallDelta(index=0, arguments='{"city":'),
        ToolCallDelta(index=0, arguments='"Oslo"}'),
        ToolCallDelta(index=1, id="c2", name="get_time", arguments=""),
        ToolCallDelta(index=1, arguments="{}"),
    ]
    assert response.message.tool_calls == (
        ToolCall(id="c1", name="get_weather", arguments='{"city":"Oslo"}'),
        ToolCall(id="c2", name="get_time", arguments="{}"),
    )
    assert response.finish_reason == "tool_calls"


async def test_an_incomplete_stream_finishes_with_length() -> None:
    """A response.incomplete terminal event (max_output_tokens) reads as "length"."""
    cut = completed(status="incomplete", incomplete="max_output_tokens")
    api = fake_responses_api(event_stream(*text_events("Half"), cut))

    _, response = await collect(api)

    assert response.finish_reason == "length"
    assert response.message.content == "Half"


async def test_a_stream_without_usage_records_usage_as_unknown() -> None:
    """A terminal event without usage gives unknown usage, not zero."""
    api = fake_responses_api(event_stream(*text_events("Hi"), completed(usage=None)))

    _, response = await collect(api)

    assert response.usage.reported is False


async def test_a_failed_response_event_is_retried() -> None:
    """response.failed (and a stream error event) fail the attempt, not the call."""
    failed = {"type": "response.failed", "response": {"error": {"message": "server hiccup"}}}
    errored = {"type": "error", "code": "server_error", "message": "oops"}
    api = fake_responses_api(event_stream(failed), event_stream(errored), HELLO)

    _, response = await collect(api)

    assert response.message.content == "Hello"
    assert api.sleep.delays == [1.0, 2.0]
