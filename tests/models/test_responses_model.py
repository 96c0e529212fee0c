"""OpenAIResponsesModel.respond through the real openai client: what only the Responses API
sends and answers (what both adapters share is in test_openai_model.py)."""

from __future__ import annotations

from swarmkit.messages import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage
from swarmkit.models import (
    ModelRequest,
    ModelSettings,
    OutputSchema,
)
from tests.models.fake_openai import MODEL, WEATHER
from tests.models.fake_responses import answer, fake_responses_api


def ask(text: str = "Hi", **fields: object) -> ModelRequest:
    """A one-message request."""
    return ModelRequest(messages=(UserMessage(content=text),), **fields)  # type: ignore[arg-type]


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


async def test_a_named_tool_choice_forces_that_function() -> None:
    """A tool's name as tool_choice is sent as the API's forced-function choice."""
    api = fake_responses_api(answer())

    await api.model.respond(
        ask(tools=(WEATHER,), settings=ModelSettings(tool_choice="get_weather"))
    )

    assert api.body()["tool_choice"] == {"type": "function", "name": "get_weather"}


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
