"""OpenAIResponsesModel.respond through the real openai client: the body sent, answers read."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from swarmkit.exceptions import ConfigurationError
from swarmkit.messages import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage
from swarmkit.models import (
    Model,
    ModelRequest,
    ModelSettings,
    OpenAIResponsesModel,
    OutputSchema,
    StreamingModel,
    ToolSpec,
    Usage,
)
from tests.models.fake_openai import API_KEY, MODEL
from tests.models.fake_responses import answer, call_item, fake_responses_api

WEATHER = ToolSpec(
    name="get_weather",
    description="The weather in a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ("city",),
        "additionalProperties": False,
    },
    strict=True,
)


def ask(text: str = "Hi", **fields: object) -> ModelRequest:
    """A one-message request."""
    return ModelRequest(messages=(UserMessage(content=text),), **fields)  # type: ignore[arg-type]


async def test_plain_text_answer_comes_back_with_usage() -> None:
    """A text answer is the message's content; input/output tokens become our usage."""
    api = fake_responses_api(answer("Hello!"))

    response = await api.model.respond(ask())

    assert response.message == AssistantMessage(content="Hello!")
    assert response.usage == Usage(prompt_tokens=12, completion_tokens=5, total_tokens=17)
    assert response.finish_reason == "stop"
    assert response.model == MODEL
    assert api.body() == {"model": MODEL, "input": [{"role": "user", "content": "Hi"}]}
    assert api.requests[0].headers["authorization"] == f"Bearer {API_KEY}"


async def test_tool_call_round_trip_sends_the_exact_body() -> None:
    """A whole tool round trip goes out as input items: calls and their outputs by call id."""
    api = fake_responses_api(answer("Sunny in Oslo."))
    request = ModelRequest(
        messages=(
            SystemMessage(content="Be brief."),
            UserMessage(content="Weather in Oslo?"),
            AssistantMessage(
                content="Let me check.",
                tool_calls=(ToolCall(id="c1", name="get_weather", arguments='{"city":"Oslo"}'),),
                agent="weather",
            ),
            ToolMessage(tool_call_id="c1", name="get_weather", content="sunny", is_error=True),
        ),
        tools=(WEATHER,),
        settings=ModelSettings(
            temperature=0.2,
            top_p=0.9,
            max_tokens=50,
            seed=7,
            tool_choice="auto",
            parallel_tool_calls=False,
            extra_body={"store": False},
        ),
    )

    await api.model.respond(request)

    assert api.body() == {
        "model": MODEL,
        "input": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "content": "Let me check."},
            {
                "type": "function_call",
                "call_id": "c1",
                "name": "get_weather",
                "arguments": '{"city":"Oslo"}',
            },
            {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
        ],
        "tools": [
            {
                "type": "function",
                "name": "get_weather",
                "description": "The weather in a city.",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                    "additionalProperties": False,
                },
                "strict": True,
            }
        ],
        "temperature": 0.2,
        "top_p": 0.9,
        "max_output_tokens": 50,
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "store": False,
    }


async def test_function_calls_in_the_answer_are_returned_in_order_by_call_id() -> None:
    """Function call items become tool calls named by their call_id, arguments kept raw."""
    calls = [call_item("c1", "get_weather", '{"city":"Oslo"}'), call_item("c2", "x", "{bad")]
    api = fake_responses_api(answer(None, calls=calls))

    response = await api.model.respond(ask())

    assert response.message == AssistantMessage(
        tool_calls=(
            ToolCall(id="c1", name="get_weather", arguments='{"city":"Oslo"}'),
            ToolCall(id="c2", name="x", arguments="{bad"),
        )
    )
    assert response.finish_reason == "tool_calls"


async def test_a_named_tool_choice_forces_that_function() -> None:
    """A tool's name as tool_choice is sent as the API's forced-function choice."""
    api = fake_responses_api(answer())

    await api.model.respond(
        ask(tools=(WEATHER,), settings=ModelSettings(tool_choice="get_weather"))
    )

    assert api.body()["tool_choice"] == {"type": "function", "name": "get_weather"}


async def test_tool_settings_are_not_sent_without_tools() -> None:
    """tool_choice and parallel_tool_calls go out only when tools are offered."""
    api = fake_responses_api(answer())

    await api.model.respond(ask(settings=ModelSettings(tool_choice="none")))

    assert "tool_choice" not in api.body()


async def test_an_output_schema_is_sent_as_a_strict_text_format() -> None:
    """An output schema becomes the request's text.format json_schema."""
    schema = OutputSchema(name="Answer", schema={"type": "object"}, strict=True)
    api = fake_responses_api(answer('{"a": 1}'))

    await api.model.respond(ask(output_schema=schema))

    assert api.body()["text"] == {
        "format": {
            "type": "json_schema",
            "name": "Answer",
            "schema": {"type": "object"},
            "strict": True,
        }
    }


async def test_an_answer_cut_by_the_output_limit_finishes_with_length() -> None:
    """An incomplete response (max_output_tokens) reads as finish_reason "length"."""
    api = fake_responses_api(
        answer("Half an ans", status="incomplete", incomplete="max_output_tokens")
    )

    response = await api.model.respond(ask())

    assert response.finish_reason == "length"
    assert response.message.content == "Half an ans"


async def test_a_refusal_is_returned_as_text() -> None:
    """A refusal content part is the answer's text."""
    refusal = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "refusal", "refusal": "No."}],
    }
    api = fake_responses_api(answer(None, calls=[refusal]))

    response = await api.model.respond(ask())

    assert response.message.content == "No."


async def test_an_answer_without_usage_has_unknown_usage() -> None:
    """No usage object means usage unknown, not zero tokens."""
    api = fake_responses_api(answer("Hi", usage=None))

    response = await api.model.respond(ask())

    assert response.usage.reported is False


async def test_model_call_finished_is_logged_with_the_api() -> None:
    """The finished call is logged with tokens and which API served it."""
    api = fake_responses_api(answer())

    with capture_logs() as logs:
        await api.model.respond(ask())

    (finished,) = [e for e in logs if e["event"] == "model_call_finished"]
    assert finished["api"] == "responses"
    assert finished["total_tokens"] == 17


async def test_a_missing_api_key_is_a_configuration_error_at_the_first_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Construction needs no key; the first call without one says how to give it."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = OpenAIResponsesModel("gpt-test")

    with pytest.raises(
        ConfigurationError, match=r"OpenAIResponsesModel\('gpt-test'\).*OPENAI_API_KEY"
    ):
        await model.respond(ask())


def test_the_model_has_its_name_and_satisfies_both_protocols() -> None:
    """The adapter is a Model and a StreamingModel, named for its API."""
    model = OpenAIResponsesModel("gpt-test", api_key="k")

    assert model.name == "gpt-test"
    assert repr(model) == "OpenAIResponsesModel('gpt-test')"
    assert isinstance(model, Model)
    assert isinstance(model, StreamingModel)
