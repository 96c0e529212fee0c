"""What AnthropicModel and GeminiModel send and read: tool choice, instructions, caching,
structured output, usage, streamed thinking; each through its SDK to a loopback server."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.genai import types

from swarmkit import ConfigurationError
from swarmkit.messages import SystemMessage, ToolMessage, UserMessage
from swarmkit.models import (
    AnthropicModel,
    AttemptDiscarded,
    GeminiModel,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    OutputSchema,
    RetryPolicy,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
)
from swarmkit.models._anthropic_wire import StreamAssembler
from swarmkit.models._gemini_wire import model_parts, parse_response
from tests.models.raw_server import raw_server, sse_reply
from tests.models.state_server import StateServer, bodies, call, say, state_server

ONE_TRY = RetryPolicy(max_attempts=1)
LOOKUP = ToolSpec(
    name="lookup",
    description="Look an order up.",
    parameters={"type": "object", "properties": {"order": {"type": "string"}}},
)
SCHEMA = OutputSchema(
    name="Ticket", schema={"type": "object", "properties": {"title": {"type": "string"}}}
)


def _request(**settings: object) -> ModelRequest:
    return ModelRequest(
        messages=(SystemMessage(content="Be brief."), UserMessage(content="Where is A1?")),
        tools=(LOOKUP,),
        settings=ModelSettings(**settings),  # type: ignore[arg-type]
    )


def _claude(server: StateServer, **options: object) -> AnthropicModel:
    return AnthropicModel(
        "claude-test",
        base_url=f"{server.url}/anthropic",
        api_key="sk-ant-1",
        retry=ONE_TRY,
        **options,  # type: ignore[arg-type]
    )


def _gemini(server: StateServer) -> GeminiModel:
    return GeminiModel(
        "gemini-test", base_url=f"{server.url}/gemini", api_key="AIza-1", retry=ONE_TRY
    )


@pytest.mark.parametrize(
    ("choice", "parallel", "sent"),
    [
        (None, None, None),
        ("auto", None, {"type": "auto"}),
        ("required", None, {"type": "any"}),
        ("none", None, {"type": "none"}),
        ("lookup", None, {"type": "tool", "name": "lookup"}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
    ],
)
async def test_anthropic_tool_choice_maps_to_the_messages_api(
    choice: str | None, parallel: bool | None, sent: object
) -> None:
    """auto/required/none/a name become auto/any/none/tool; no parallel calls rides along."""
    async with state_server(say("ok")) as server:
        await _claude(server).respond(_request(tool_choice=choice, parallel_tool_calls=parallel))

    body = bodies(server, "anthropic")[0]
    assert body.get("tool_choice") == sent
    assert body["tools"] == [
        {"name": "lookup", "description": "Look an order up.", "input_schema": LOOKUP.parameters}
    ]


async def test_anthropic_sends_instructions_as_system_and_caches_them_when_asked() -> None:
    """The system message goes as ``system``; cache_prompt marks it and the last tool."""
    async with state_server(say("ok"), say("ok")) as server:
        await _claude(server).respond(_request())
        await _claude(server, cache_prompt=True, max_tokens=64).respond(_request())

    plain, cached = bodies(server, "anthropic")
    assert plain["system"] == "Be brief." and plain["max_tokens"] == 4096
    assert plain["messages"] == [{"role": "user", "content": "Where is A1?"}]
    assert cached["system"] == [
        {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
    ]
    assert cached["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert cached["max_tokens"] == 64


async def test_anthropic_usage_counts_cached_tokens_in_the_prompt() -> None:
    """Cache reads and writes are reported on their own and counted in the prompt."""
    async with state_server(say("ok")) as server:
        response = await _claude(server).respond(_request())

    usage = response.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (15, 5, 20)
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (3, 2)


async def test_anthropic_sends_thinking_and_structured_output() -> None:
    """thinking_budget switches extended thinking on; an output schema goes as output_config."""
    async with state_server(say('{"title": "x"}')) as server:
        request = ModelRequest(messages=(UserMessage(content="File it."),), output_schema=SCHEMA)
        response = await _claude(server, thinking_budget=2048).respond(request)

    body = bodies(server, "anthropic")[0]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": SCHEMA.schema}}
    assert response.message.content == '{"title": "x"}'
    assert response.message.provider_state is not None


def test_a_streamed_thinking_block_keeps_its_text_and_signature() -> None:
    """Thinking and signature deltas assemble into the block the API wants back."""
    assembler = StreamAssembler()
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"model": "c", "usage": {"input_tokens": 4}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "thinking_delta", "thinking": "Check "}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "thinking_delta", "thinking": "the order."}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "signature_delta", "signature": "EqQBCkYI"}},
        {"type": "content_block_start", "index": 1,
         "content_block": {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}},
        {"type": "content_block_delta", "index": 1,
         "delta": {"type": "input_json_delta", "partial_json": '{"order": '}},
        {"type": "content_block_delta", "index": 1,
         "delta": {"type": "input_json_delta", "partial_json": '"A1"}'}},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
         "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]  # fmt: skip

    deltas = [delta for event in events for delta in assembler.add(event)]
    response = assembler.response()

    assert not any(isinstance(d, TextDelta) for d in deltas)
    assert [d.arguments for d in deltas if isinstance(d, ToolCallDelta)] == [
        "",
        '{"order": ',
        '"A1"}',
    ]
    state = response.message.provider_state
    assert state is not None
    assert state.data["blocks"] == [
        {"type": "thinking", "thinking": "Check the order.", "signature": "EqQBCkYI"}
    ]
    assert response.message.tool_calls[0].arguments == '{"order": "A1"}'
    assert (response.finish_reason, response.usage.total_tokens) == ("tool_calls", 13)


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        ("auto", {"mode": "AUTO"}),
        ("required", {"mode": "ANY"}),
        ("none", {"mode": "NONE"}),
        ("lookup", {"mode": "ANY", "allowedFunctionNames": ["lookup"]}),
    ],
)
async def test_gemini_tool_choice_maps_to_function_calling_modes(choice: str, sent: object) -> None:
    """auto/required/none/a name become the AUTO/ANY/NONE modes (ANY of one name)."""
    async with state_server(say("ok")) as server:
        await _gemini(server).respond(_request(tool_choice=choice))

    body = bodies(server, "gemini")[0]
    assert body["toolConfig"]["functionCallingConfig"] == sent
    assert body["systemInstruction"]["parts"] == [{"text": "Be brief."}]


async def test_gemini_asks_for_json_that_follows_the_output_schema() -> None:
    """An output schema goes as a JSON response with that schema; usage is read back."""
    async with state_server(say('{"title": "x"}')) as server:
        request = ModelRequest(messages=(UserMessage(content="File it."),), output_schema=SCHEMA)
        response = await _gemini(server).respond(request)

    config = bodies(server, "gemini")[0]["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == SCHEMA.schema
    assert (response.usage.prompt_tokens, response.usage.total_tokens) == (10, 15)


async def test_gemini_sends_each_call_back_with_its_signature_and_results_together() -> None:
    """A turn of two calls goes back with both signatures; both results in one user turn."""
    async with state_server(call("lookup", order="A1"), say("ok")) as server:
        model = _gemini(server)
        first = await model.respond(_request())
        calls = first.message.tool_calls
        results = tuple(
            ToolMessage(tool_call_id=c.id, name=c.name, content="shipped") for c in calls
        )
        request = _request()
        await model.respond(
            ModelRequest(messages=(*request.messages, first.message, *results), tools=request.tools)
        )

    assert server.refusals == []
    contents = bodies(server, "gemini")[1]["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    assert contents[1]["parts"][0]["thoughtSignature"]


def test_native_adapters_refuse_bad_arguments_at_construction() -> None:
    """A wrong argument is a ConfigurationError naming what to pass."""
    with pytest.raises(ConfigurationError, match="model name"):
        AnthropicModel("")
    with pytest.raises(ConfigurationError, match="thinking_budget"):
        AnthropicModel("claude", thinking_budget=0)
    with pytest.raises(ConfigurationError, match="client="):
        GeminiModel("gemini", client="not a client")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="RetryPolicy"):
        GeminiModel("gemini", retry=3)  # type: ignore[arg-type]


async def test_a_missing_key_is_a_configuration_error_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No api_key= and no environment key: the error says which variable to set."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        await AnthropicModel("claude").respond(_request())


def test_gemini_thoughts_and_a_signed_text_part_go_back_as_they_came() -> None:
    """A thought summary and a signed text part are the turn's state; the text is the answer."""
    parts = [
        types.Part(text="Thinking about A1.", thought=True),
        types.Part(text="A1 shipped.", thought_signature=b"\x01sig"),
    ]
    answer = types.GenerateContentResponse(
        candidates=[types.Candidate(content=types.Content(role="model", parts=parts))]
    )

    message = parse_response(answer).message

    assert message.content == "A1 shipped."
    assert model_parts(message) == parts


def _claude_events(*events: dict[str, Any]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


async def test_an_overloaded_error_inside_a_claude_stream_is_retried_from_scratch() -> None:
    """An ``overloaded_error`` event mid-stream voids the attempt; the next one answers."""
    start: dict[str, Any] = {
        "type": "message_start",
        "message": {"model": "c", "usage": {"input_tokens": 3}},
    }
    text: list[dict[str, Any]] = [
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "text_delta", "text": "Hello"}},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
         "usage": {"output_tokens": 1}},
        {"type": "message_stop"},
    ]  # fmt: skip
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    broken = sse_reply(_claude_events(start, text[0], overloaded), done=False)
    whole = sse_reply(_claude_events(start, *text), done=False)
    async with raw_server(broken, whole) as server:
        model = AnthropicModel(
            "claude-test",
            base_url=f"http://127.0.0.1:{server.port}",
            api_key="sk-ant-1",
            retry=RetryPolicy(max_attempts=2, initial_backoff=0.0, jitter=0.0),
        )
        items = [item async for item in model.stream(ModelRequest(messages=_request().messages))]

    assert [i.reason for i in items if isinstance(i, AttemptDiscarded)] == ["error_answer"]
    last = items[-1]
    assert isinstance(last, ModelResponse) and last.message.content == "Hello"
