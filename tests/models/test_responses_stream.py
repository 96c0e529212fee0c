"""OpenAIResponsesModel.stream: text and argument deltas, the response last, stream faults."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from swarmkit.exceptions import ModelError
from swarmkit.messages import AssistantMessage, ToolCall, UserMessage
from swarmkit.models import (
    AttemptDiscarded,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    RetryPolicy,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from tests.models.fake_openai import error
from tests.models.fake_responses import (
    FakeResponsesAPI,
    broken_event_stream,
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


async def collect(api: FakeResponsesAPI) -> tuple[list[ModelDelta], ModelResponse]:
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


async def test_text_streams_as_deltas_then_the_response_with_usage() -> None:
    """Text arrives piece by piece; the response joins it and carries the terminal usage."""
    api = fake_responses_api(HELLO)

    deltas, response = await collect(api)

    assert deltas == [TextDelta(text="Hel"), TextDelta(text="lo")]
    assert response.message == AssistantMessage(content="Hello")
    assert response.usage == Usage(prompt_tokens=9, completion_tokens=2, total_tokens=11)
    assert response.finish_reason == "stop"
    assert api.body()["stream"] is True


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


async def test_streamed_malformed_arguments_are_returned_intact() -> None:
    """Arguments that are not JSON come back as written, for the loop to report to the model."""
    api = fake_responses_api(
        event_stream(*call_events(0, "c1", "get_weather", '{"city: Oslo'), completed())
    )

    _, response = await collect(api)

    assert response.message.tool_calls == (
        ToolCall(id="c1", name="get_weather", arguments='{"city: Oslo'),
    )


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


async def test_a_stream_without_its_terminal_event_is_retried() -> None:
    """A stream that ends before response.completed is retried; the partial text is
    discarded and the retry's deltas alone make the answer."""
    api = fake_responses_api(event_stream(*text_events("Hel")), HELLO)

    deltas, response = await collect(api)

    assert deltas == [TextDelta(text="Hel"), TextDelta(text="lo")]
    assert response.message.content == "Hello"
    assert api.sleep.delays == [1.0]


async def test_a_failed_response_event_is_retried() -> None:
    """response.failed (and a stream error event) fail the attempt, not the call."""
    failed = {"type": "response.failed", "response": {"error": {"message": "server hiccup"}}}
    errored = {"type": "error", "code": "server_error", "message": "oops"}
    api = fake_responses_api(event_stream(failed), event_stream(errored), HELLO)

    _, response = await collect(api)

    assert response.message.content == "Hello"
    assert api.sleep.delays == [1.0, 2.0]


async def test_a_stream_event_with_invalid_json_is_retried() -> None:
    """An event whose data is not JSON (a truncated event) fails the attempt, not the call."""
    api = fake_responses_api(event_stream(*text_events("Hel"), '{"type": "resp'), HELLO)

    _, response = await collect(api)

    assert response.message.content == "Hello"
    assert api.sleep.delays == [1.0]


async def test_a_connection_dropped_mid_stream_is_retried() -> None:
    """A connection lost after some events is retried from the start."""
    api = fake_responses_api(broken_event_stream(*text_events("Hel")), HELLO)

    _, response = await collect(api)

    assert response.message.content == "Hello"
    assert api.sleep.delays == [1.0]


async def test_a_rate_limited_stream_honours_retry_after() -> None:
    """A 429 before the stream starts waits what the server asks."""
    api = fake_responses_api(error(429, headers={"retry-after-ms": "1500"}), HELLO)

    _, response = await collect(api)

    assert response.message.content == "Hello"
    assert api.sleep.delays == [1.5]


async def test_a_stream_bad_request_is_not_retried() -> None:
    """A 400 on a streamed call fails at once with ModelError."""
    api = fake_responses_api(error(400, "unknown parameter"))

    with pytest.raises(ModelError, match="unknown parameter") as caught:
        await collect(api)

    assert caught.value.attempts == 1
    assert caught.value.status_code == 400
    assert len(api.requests) == 1


async def test_a_stream_that_keeps_failing_raises_model_error() -> None:
    """When every attempt is cut short, ModelError counts them."""
    cut = event_stream(*text_events("Hel"))
    api = fake_responses_api(cut, cut, policy=RetryPolicy(max_attempts=2, jitter=0.0))

    with pytest.raises(ModelError, match="incomplete_response") as caught:
        await collect(api)

    assert caught.value.attempts == 2


async def test_a_consumer_may_stop_a_stream_early() -> None:
    """Breaking out after the first delta closes the stream without errors or retries."""
    api = fake_responses_api(HELLO)

    stream = api.model.stream(REQUEST)
    first = await anext(stream)
    await stream.aclose()  # type: ignore[attr-defined]

    assert first == TextDelta(text="Hel")
    assert api.sleep.delays == []


async def test_a_finished_stream_is_logged_once_with_its_usage() -> None:
    """model_call_finished is logged once per stream, with the retried attempt's number."""
    api = fake_responses_api(event_stream(*text_events("Hel")), HELLO)

    with capture_logs() as logs:
        await collect(api)

    finished = [e for e in logs if e["event"] == "model_call_finished"]
    assert [(e["attempt"], e["total_tokens"], e["stream"]) for e in finished] == [(2, 11, True)]
