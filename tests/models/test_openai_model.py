"""OpenAIModel.respond through the real openai client: requests sent, responses read, config
(the cases both OpenAI adapters share run for each)."""

from __future__ import annotations

import itertools
import re

import httpx
import pytest
from openai import AsyncOpenAI
from structlog.testing import capture_logs

from swarmkit.exceptions import ConfigurationError
from swarmkit.messages import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage
from swarmkit.models import (
    Model,
    ModelRequest,
    ModelSettings,
    OpenAIModel,
    StreamingModel,
    Timeouts,
    ToolSpec,
    Usage,
)
from tests.models.fake_openai import (
    API_KEY,
    BASE_URL,
    MODEL,
    WEATHER,
    completion,
    fake_api,
    tool_call_json,
)
from tests.models.openai_adapters import Adapter

CLOCK = ToolSpec(
    name="get_time", description="The time now.", parameters={"type": "object", "properties": {}}
)


def ask(text: str = "Hi") -> ModelRequest:
    """A one-message request."""
    return ModelRequest(messages=(UserMessage(content=text),))


async def test_plain_text_answer_comes_back_with_usage(adapter: Adapter) -> None:
    """A text answer is returned with its usage, finish reason and server model name."""
    api = adapter.fake(adapter.answer("Hello there!", usage=(21, 4)))

    response = await api.model.respond(ask())

    assert response.message == AssistantMessage(content="Hello there!")
    assert response.usage == Usage(prompt_tokens=21, completion_tokens=4, total_tokens=25)
    assert response.finish_reason == "stop"
    assert response.model == MODEL
    assert api.body() == adapter.plain_body


async def test_tool_call_round_trip_sends_the_exact_body() -> None:
    """History with tool calls and results, strict tools and settings go out as the API wants."""
    api = fake_api(completion("Sunny in Paris, 10:00 now."))
    request = ModelRequest(
        messages=(
            SystemMessage(content="Be brief."),
            UserMessage(content="Weather and time in Paris?"),
            AssistantMessage(
                tool_calls=(
                    ToolCall(id="call_1", name="get_weather", arguments='{"city": "Paris"}'),
                    ToolCall(id="call_2", name="get_time", arguments="{}"),
                ),
                agent="weather_agent",
            ),
            ToolMessage(tool_call_id="call_1", name="get_weather", content="sunny"),
            ToolMessage(tool_call_id="call_2", name="get_time", content="boom", is_error=True),
            AssistantMessage(content="Checking.", agent="weather_agent"),
        ),
        tools=(WEATHER, CLOCK),
        settings=ModelSettings(
            temperature=0.2,
            top_p=0.9,
            max_tokens=256,
            seed=7,
            tool_choice="required",
            parallel_tool_calls=False,
            extra_body={"top_k": 40, "chat_template_kwargs": {"thinking": False}},
        ),
        agent="weather_agent",
    )

    await api.model.respond(request)

    assert api.body() == {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather and time in Paris?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    tool_call_json("call_1", "get_weather", '{"city": "Paris"}'),
                    tool_call_json("call_2", "get_time", "{}"),
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
            {"role": "tool", "tool_call_id": "call_2", "content": "boom"},
            {"role": "assistant", "content": "Checking."},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "The weather in a city.",
                    "parameters": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}},
                        "required": ["city"],
                        "additionalProperties": False,
                    },
                    "strict": True,
                },
            },
            {
                "type": "function",
                "function": {
                    "name": "get_time",
                    "description": "The time now.",
                    "parameters": {"type": "object", "properties": {}},
                },
            },
        ],
        "temperature": 0.2,
        "top_p": 0.9,
        "max_tokens": 256,
        "seed": 7,
        "tool_choice": "required",
        "parallel_tool_calls": False,
        "top_k": 40,
        "chat_template_kwargs": {"thinking": False},
        "stream": False,
    }


async def test_tool_calls_in_the_answer_are_returned_in_order(adapter: Adapter) -> None:
    """The model's tool calls come back as ToolCalls with their ids and raw arguments."""
    calls = [("call_a", "get_weather", '{"city": "Oslo"}'), ("call_b", "get_time", "{}")]
    api = adapter.fake(adapter.calls_answer(calls))

    response = await api.model.respond(ModelRequest(messages=ask().messages, tools=(WEATHER,)))

    assert response.message == AssistantMessage(
        content=None,
        tool_calls=(
            ToolCall(id="call_a", name="get_weather", arguments='{"city": "Oslo"}'),
            ToolCall(id="call_b", name="get_time", arguments="{}"),
        ),
    )
    assert response.finish_reason == "tool_calls"


async def test_malformed_tool_call_arguments_are_returned_intact(adapter: Adapter) -> None:
    """Arguments that are not valid JSON reach the loop as written; nothing raises here."""
    broken = '{"city": "Par'
    api = adapter.fake(adapter.calls_answer([("c1", "get_weather", broken)]))

    response = await api.model.respond(ask())

    assert response.message.tool_calls == (ToolCall(id="c1", name="get_weather", arguments=broken),)


async def test_tool_settings_are_not_sent_without_tools(adapter: Adapter) -> None:
    """tool_choice and parallel_tool_calls are left out when no tool is offered."""
    api = adapter.fake(adapter.answer())
    settings = ModelSettings(tool_choice="auto", parallel_tool_calls=True, temperature=0.0)

    await api.model.respond(ModelRequest(messages=ask().messages, settings=settings))

    assert api.body() == {**adapter.plain_body, "temperature": 0.0}


async def test_the_api_key_is_sent_as_a_bearer_token(adapter: Adapter) -> None:
    """The injected client's key authenticates each request, sent to the adapter's endpoint."""
    api = adapter.fake(adapter.answer())

    await api.model.respond(ask())

    assert api.requests[0].headers["authorization"] == f"Bearer {API_KEY}"
    assert str(api.requests[0].url) == f"{BASE_URL}{adapter.path}"


async def test_a_timeout_applies_to_each_request() -> None:
    """timeout= sets the per-attempt HTTP timeout, also on an injected client."""
    api = fake_api(completion(), timeout=5.0)

    await api.model.respond(ask())

    assert api.requests[0].extensions["timeout"] == {
        "connect": 5.0,
        "read": 5.0,
        "write": 5.0,
        "pool": 5.0,
    }


async def test_timeouts_set_the_clients_connect_timeout_and_a_whole_attempt_backstop() -> None:
    """The HTTP client gets connect= and the total; first byte and gaps are our deadlines."""
    api = fake_api(completion(), timeouts=Timeouts(connect=2.0, first_byte=7.0, total=9.0))

    await api.model.respond(ask())

    assert api.requests[0].extensions["timeout"] == {
        "connect": 2.0,
        "read": 9.0,
        "write": 9.0,
        "pool": 9.0,
    }


async def test_model_call_finished_is_logged_with_tokens_and_latency(adapter: Adapter) -> None:
    """Each successful call logs one event with model, latency, tokens, attempt, finish reason
    (and the API, for the adapter that speaks more than one)."""
    ticks = itertools.count(start=10.0, step=0.25)
    api = adapter.fake(adapter.answer(usage=(30, 7)), clock=lambda: next(ticks))

    with capture_logs() as logs:
        await api.model.respond(ask())

    assert logs == [
        {
            "event": "model_call_finished",
            "log_level": "info",
            "model": MODEL,
            "latency_ms": 250.0,
            "prompt_tokens": 30,
            "completion_tokens": 7,
            "total_tokens": 37,
            "attempt": 1,
            "finish_reason": "stop",
            "stream": False,
            **adapter.log_fields,
        }
    ]


async def test_a_missing_api_key_is_a_configuration_error_at_the_first_call(
    adapter: Adapter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a key the model still constructs; its first call says how to provide one."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = adapter.model_class("gpt-test")
    named = re.escape(f"{adapter.model_class.__name__}('gpt-test')")

    with pytest.raises(ConfigurationError, match=f"{named}.*OPENAI_API_KEY"):
        await model.respond(ask())


async def test_key_and_base_url_are_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """OPENAI_API_KEY and OPENAI_BASE_URL configure the client the model builds itself."""
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    model = OpenAIModel("llama3")

    client = model._ready_client()  # the client is built lazily; no public accessor

    assert client.api_key == API_KEY
    assert str(client.base_url) == "http://localhost:11434/v1/"
    assert client.max_retries == 0
    await model.aclose()


async def test_explicit_key_and_base_url_win_over_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """api_key= and base_url= override the environment, for any compatible server."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-0000")
    model = OpenAIModel("qwen", base_url="http://vllm.local:8000/v1", api_key="sk-explicit-1111")

    client = model._ready_client()

    assert client.api_key == "sk-explicit-1111"
    assert str(client.base_url) == "http://vllm.local:8000/v1/"
    await model.aclose()


def test_a_client_with_a_key_or_base_url_is_a_configuration_error() -> None:
    """An injected client is configured on its own; passing both is refused at construction."""
    client = AsyncOpenAI(api_key=API_KEY, base_url=BASE_URL, http_client=None)

    with pytest.raises(ConfigurationError, match="either client"):
        OpenAIModel("gpt-test", client=client, api_key="sk-other-key")


def test_an_empty_model_name_is_a_configuration_error() -> None:
    """A model needs a name."""
    with pytest.raises(ConfigurationError, match="model name"):
        OpenAIModel("")


def test_the_model_has_its_name_and_satisfies_both_protocols(adapter: Adapter) -> None:
    """The model exposes its name and is a Model and a StreamingModel; repr shows no key."""
    model = adapter.model_class("gpt-test", api_key=API_KEY)

    assert model.name == "gpt-test"
    assert repr(model) == f"{adapter.model_class.__name__}('gpt-test')"
    assert isinstance(model, Model)
    assert isinstance(model, StreamingModel)
    assert API_KEY not in repr(model)


async def test_an_injected_http_client_is_not_closed_by_aclose() -> None:
    """aclose only closes a client the model built; an injected one belongs to its owner."""
    http = httpx.AsyncClient()
    client = AsyncOpenAI(api_key=API_KEY, base_url=BASE_URL, http_client=http)  # type: ignore[arg-type]
    model = OpenAIModel("gpt-test", client=client)

    await model.aclose()

    assert not http.is_closed
    await http.aclose()
