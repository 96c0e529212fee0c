"""AnthropicModel and GeminiModel through their official SDKs against llmock's Messages and
generateContent endpoints: tool turns, streaming, rate limits, server errors and stalls."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from swarmkit import Agent, Swarm, tool
from swarmkit.events import RunFinished, TextDelta
from swarmkit.messages import UserMessage
from swarmkit.models import (
    AnthropicModel,
    AttemptDiscarded,
    GeminiModel,
    Model,
    ModelRequest,
    ModelResponse,
    RetryPolicy,
    StreamingModel,
    Timeouts,
)
from tests.e2e.conftest import LLMockServer
from tests.models.fake_openai import RecordingSleep

POLICY = RetryPolicy(max_attempts=3, initial_backoff=0.5, jitter=0.0)
KEY = "sk-ant-llmock-Zq8v3Kp0Lm5Xw2Rt7"


def anthropic(
    server: LLMockServer, sleep: RecordingSleep, timeouts: Timeouts | None = None
) -> AnthropicModel:
    """Claude on llmock's Messages endpoint, its waits recorded."""
    return AnthropicModel(
        "claude-sonnet-4-6",
        base_url=f"{server.url}/anthropic",
        api_key=KEY,
        retry=POLICY,
        sleep=sleep,
        timeouts=timeouts,
    )


def gemini(
    server: LLMockServer, sleep: RecordingSleep, timeouts: Timeouts | None = None
) -> GeminiModel:
    """Gemini on llmock's generateContent endpoint, its waits recorded."""
    return GeminiModel(
        "gemini-2.5-flash",
        base_url=f"{server.url}/gemini",
        api_key=KEY,
        retry=POLICY,
        sleep=sleep,
        timeouts=timeouts,
    )


ADAPTERS: dict[str, Callable[..., Model]] = {"anthropic": anthropic, "gemini": gemini}


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"21C in {city}"


def _seen(server: LLMockServer, provider: str) -> list[dict[str, Any]]:
    answer = httpx.get(f"{server.url}/_llmock/requests").raise_for_status().json()
    records = answer["requests"] if isinstance(answer, dict) else answer
    return [r for r in records if f"/{provider}/" in str(r.get("path", ""))]


def _weather_call() -> dict[str, Any]:
    return {"type": "reply", "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]}


@pytest.mark.parametrize("provider", ADAPTERS)
async def test_a_scripted_tool_call_runs_the_tool_then_the_model_answers(
    llmock_api: LLMockServer, provider: str
) -> None:
    """The call comes back parsed, its result goes back as the provider wants, then text."""
    llmock_api.script(_weather_call())
    agent = Agent(name="weather", instructions="Help with the weather.", tools=[get_weather])
    model = ADAPTERS[provider](llmock_api, RecordingSleep())

    result = await Swarm([agent], "weather", model=model).run("Weather in Oslo?")

    assert (result.stop_reason, result.turns) == ("final_output", 2)
    assert result.messages[2].content == "21C in Oslo"
    assert result.final_output and "Mock response" in result.final_output
    assert result.usage["weather"].total_tokens > 0
    assert len(_seen(llmock_api, provider)) == 2


@pytest.mark.parametrize("provider", ADAPTERS)
async def test_streaming_yields_text_deltas_that_join_into_the_answer(
    llmock_api: LLMockServer, provider: str
) -> None:
    """Deltas arrive as the server streams them; together they are the final answer."""
    model = ADAPTERS[provider](llmock_api, RecordingSleep())
    swarm = Swarm([Agent(name="a", instructions="Answer.")], "a", model=model)

    events = [event async for event in swarm.stream("Hello?")]

    finished = events[-1]
    assert isinstance(finished, RunFinished)
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1
    assert "".join(deltas) == finished.result.final_output


@pytest.mark.parametrize("provider", ADAPTERS)
async def test_a_streamed_tool_call_arrives_whole(llmock_api: LLMockServer, provider: str) -> None:
    """A streamed call's pieces assemble into the call the tool then runs with."""
    llmock_api.script(_weather_call())
    agent = Agent(name="weather", instructions="Help.", tools=[get_weather])
    model = ADAPTERS[provider](llmock_api, RecordingSleep())

    events = [e async for e in Swarm([agent], "weather", model=model).stream("Oslo?")]

    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert finished.result.messages[2].content == "21C in Oslo"


@pytest.mark.parametrize("provider", ADAPTERS)
async def test_a_rate_limit_waits_what_retry_after_asks(
    llmock_api: LLMockServer, provider: str
) -> None:
    """A 429 with Retry-After: 2 costs one wait of 2 s (the SDK retried nothing itself)."""
    sleep = RecordingSleep()
    llmock_api.script({"type": "fail", "status": 429, "retry_after": 2})
    model = ADAPTERS[provider](llmock_api, sleep)

    result = await Swarm([Agent(name="a")], "a", model=model).run("Hello?")

    assert result.stop_reason == "final_output"
    assert sleep.delays == [2.0]
    assert len(_seen(llmock_api, provider)) == 2


@pytest.mark.parametrize("provider", ADAPTERS)
async def test_a_server_error_is_retried_with_backoff(
    llmock_api: LLMockServer, provider: str
) -> None:
    """A 503 then success: one wait (what the server asked, else the policy's backoff)."""
    sleep = RecordingSleep()
    llmock_api.script({"type": "fail", "status": 503})
    model = ADAPTERS[provider](llmock_api, sleep)

    result = await Swarm([Agent(name="a")], "a", model=model).run("Hello?")

    assert result.stop_reason == "final_output"
    assert len(sleep.delays) == 1
    assert len(_seen(llmock_api, provider)) == 2


@pytest.mark.parametrize("provider", ADAPTERS)
async def test_a_refused_request_is_not_retried_and_the_key_never_shows(
    llmock_api: LLMockServer, provider: str
) -> None:
    """A 400 ends the run after one request; the error names the status, not the key."""
    sleep = RecordingSleep()
    llmock_api.script({"type": "fail", "status": 400, "message": f"bad request for {KEY}"})
    model = ADAPTERS[provider](llmock_api, sleep)

    result = await Swarm([Agent(name="a")], "a", model=model).run("Hello?")

    assert result.stop_reason == "error"
    assert "http_400" in str(result.error)
    assert result.error is not None
    assert KEY not in str(result.error) and KEY not in repr(result.error.__cause__)
    assert sleep.delays == []


@pytest.mark.parametrize("provider", ADAPTERS)
async def test_a_stalled_stream_is_abandoned_at_its_gap_deadline_and_retried(
    llmock_api: LLMockServer, provider: str
) -> None:
    """A stream that goes quiet past the stream-gap deadline is discarded; the retry answers."""
    llmock_api.script({"type": "stream_fault", "kind": "stall", "after_chunks": 1})
    model = ADAPTERS[provider](llmock_api, RecordingSleep(), Timeouts(stream_gap=0.2))
    request = ModelRequest(messages=(UserMessage(content="Hello?"),))

    assert isinstance(model, StreamingModel)
    items = [item async for item in model.stream(request)]

    discarded = [i for i in items if isinstance(i, AttemptDiscarded)]
    assert [d.reason for d in discarded] == ["timeout_stream_gap"]
    last = items[-1]
    assert isinstance(last, ModelResponse)
    assert (last.message.content or "").startswith("Mock response")
