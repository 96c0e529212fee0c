"""OpenAIModel.stream: deltas as they arrive, the assembled response last, and stream faults
(the cases both OpenAI adapters share run for each)."""

from __future__ import annotations

import openai
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
from tests.models.fake_openai import (
    FakeAPI,
    call_piece,
    chunk,
    error,
    fake_api,
    sse,
)
from tests.models.openai_adapters import Adapter

REQUEST = ModelRequest(messages=(UserMessage(content="Hi"),))


async def collect(api: FakeAPI) -> tuple[list[ModelDelta], ModelResponse]:
    """Every delta of a stream, and the response it ends with (which must come last)."""
    *items, last = [item async for item in api.model.stream(REQUEST)]
    deltas = [d for d in items if isinstance(d, TextDelta | ToolCallDelta | AttemptDiscarded)]
    assert isinstance(last, ModelResponse)
    assert len(deltas) == len(items)
    return deltas, last


async def test_text_streams_as_deltas_then_the_response_with_usage(adapter: Adapter) -> None:
    """Text arrives piece by piece; the final response joins it and carries the usage."""
    api = adapter.fake(adapter.hello())

    deltas, response = await collect(api)

    assert deltas == [TextDelta(text="Hel"), TextDelta(text="lo")]
    assert response.message == AssistantMessage(content="Hello")
    assert response.usage == Usage(prompt_tokens=9, completion_tokens=2, total_tokens=11)
    assert response.finish_reason == "stop"
    body = api.body()
    assert {name: body.get(name) for name in adapter.stream_fields} == adapter.stream_fields


async def test_tool_call_arguments_split_across_chunks_are_assembled() -> None:
    """Several calls in one turn, their arguments interleaved in fragments, become whole calls."""
    api = fake_api(
        sse(
            chunk(content="Let me check."),
            chunk(tool_calls=[call_piece(0, call_id="call_w", name="get_weather", arguments="")]),
            chunk(tool_calls=[call_piece(0, arguments='{"ci')]),
            chunk(tool_calls=[call_piece(1, call_id="call_t", name="get_time", arguments='{"tz"')]),
            chunk(tool_calls=[call_piece(0, arguments='ty": "Oslo"}')]),
            chunk(tool_calls=[call_piece(1, arguments=': "CET"}')]),
            chunk(finish_reason="tool_calls"),
            chunk(choices=False, usage=(40, 22)),
        )
    )

    deltas, response = await collect(api)

    assert deltas == [
        TextDelta(text="Let me check."),
        ToolCallDelta(index=0, id="call_w", name="get_weather", arguments=""),
        ToolCallDelta(index=0, arguments='{"ci'),
        ToolCallDelta(index=1, id="call_t", name="get_time", arguments='{"tz"'),
        ToolCallDelta(index=0, arguments='ty": "Oslo"}'),
        ToolCallDelta(index=1, arguments=': "CET"}'),
    ]
    assert response.message == AssistantMessage(
        content="Let me check.",
        tool_calls=(
            ToolCall(id="call_w", name="get_weather", arguments='{"city": "Oslo"}'),
            ToolCall(id="call_t", name="get_time", arguments='{"tz": "CET"}'),
        ),
    )
    assert response.finish_reason == "tool_calls"
    assert response.usage.total_tokens == 62


async def test_streamed_malformed_tool_arguments_are_returned_intact(adapter: Adapter) -> None:
    """A call whose fragments do not add up to valid JSON is returned as written."""
    api = adapter.fake(adapter.call_stream("c1", "get_weather", '{"ci', "ty: Oslo"))

    _, response = await collect(api)

    assert response.message.tool_calls == (
        ToolCall(id="c1", name="get_weather", arguments='{"city: Oslo'),
    )


async def test_a_stream_cut_short_is_retried(adapter: Adapter) -> None:
    """A stream that ends before it says it has finished is retried; the partial attempt is
    discarded, deltas restart and the response is whole."""
    api = adapter.fake(adapter.cut(), adapter.hello())

    deltas, response = await collect(api)

    assert deltas == [
        TextDelta(text="Hel"),
        AttemptDiscarded(attempt=1, reason="incomplete_response"),
        TextDelta(text="Hel"),
        TextDelta(text="lo"),
    ]
    assert response.message.content == "Hello"
    assert api.sleep.delays == [1.0]
    assert len(api.requests) == 2


async def test_a_stream_event_with_invalid_json_is_retried(adapter: Adapter) -> None:
    """An event whose data is not JSON (a truncated event) fails the attempt, not the call."""
    api = adapter.fake(adapter.garbled(), adapter.hello())

    _, response = await collect(api)

    assert response.message.content == "Hello"
    assert api.sleep.delays == [1.0]


async def test_a_connection_dropped_mid_stream_is_retried(adapter: Adapter) -> None:
    """A connection lost after some events is retried from the start."""
    api = adapter.fake(adapter.dropped(), adapter.hello())

    _, response = await collect(api)

    assert response.message.content == "Hello"
    assert api.sleep.delays == [1.0]


async def test_a_rate_limited_stream_honours_retry_after(adapter: Adapter) -> None:
    """A 429 before the stream starts waits what the server asks."""
    api = adapter.fake(error(429, headers={"retry-after-ms": "1500"}), adapter.hello())

    _, response = await collect(api)

    assert response.message.content == "Hello"
    assert api.sleep.delays == [1.5]


async def test_a_stream_bad_request_is_not_retried(adapter: Adapter) -> None:
    """A 400 on a streamed call fails at once with ModelError."""
    api = adapter.fake(error(400, "unknown parameter"))

    with pytest.raises(ModelError, match="unknown parameter") as caught:
        await collect(api)

    assert caught.value.attempts == 1
    assert caught.value.status_code == 400
    assert len(api.requests) == 1


async def test_a_stream_that_keeps_failing_raises_model_error(adapter: Adapter) -> None:
    """When every attempt is cut short, ModelError counts them and chains the last cause."""
    policy = RetryPolicy(max_attempts=2, jitter=0.0)
    api = adapter.fake(adapter.cut(), adapter.cut(), policy=policy)

    with pytest.raises(ModelError, match="incomplete_response") as caught:
        await collect(api)

    assert caught.value.attempts == 2
    assert caught.value.__cause__ is not None
    assert not isinstance(caught.value.__cause__, openai.APIStatusError)
    assert len(api.requests) == 2


async def test_a_consumer_may_stop_a_stream_early(adapter: Adapter) -> None:
    """Breaking out after the first delta closes the stream without errors or retries."""
    api = adapter.fake(adapter.hello())

    stream = api.model.stream(REQUEST)
    first = await anext(stream)
    await stream.aclose()  # type: ignore[attr-defined]

    assert first == TextDelta(text="Hel")
    assert api.sleep.delays == []


async def test_a_finished_stream_is_logged_once_with_its_usage(adapter: Adapter) -> None:
    """model_call_finished is logged once per stream, with the retried attempt's number."""
    api = adapter.fake(adapter.cut(), adapter.hello())

    with capture_logs() as logs:
        await collect(api)

    finished = [e for e in logs if e["event"] == "model_call_finished"]
    assert len(finished) == 1
    assert finished[0]["attempt"] == 2
    assert finished[0]["total_tokens"] == 11
    assert finished[0]["stream"] is True
