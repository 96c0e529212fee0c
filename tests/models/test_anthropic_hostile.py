"""Malformed Claude answers through the real anthropic client: a ModelError naming what is
wrong, never a raw KeyError or AttributeError."""

from __future__ import annotations

import json
from typing import Any

import pytest

from swarmkit import ModelError
from swarmkit.messages import UserMessage
from swarmkit.models import AnthropicModel, ModelRequest, RetryPolicy
from tests.models.raw_server import json_reply, raw_server, sse_reply

REQUEST = ModelRequest(messages=(UserMessage(content="Where is A1?"),))
USAGE = {"input_tokens": 1, "output_tokens": 1}
CALL_WITHOUT_ID = {"type": "tool_use", "name": "lookup"}


def _message(*content: object) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "model": "c", "content": list(content),
            "stop_reason": "tool_use", "usage": USAGE}  # fmt: skip


def _model(port: int) -> AnthropicModel:
    return AnthropicModel(
        "claude-test",
        base_url=f"http://127.0.0.1:{port}",
        api_key="sk-ant-test-key",
        retry=RetryPolicy(max_attempts=1),
    )


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        pytest.param(
            _message({"type": "tool_use", "name": "lookup", "input": {}}),
            "content[0].id must be a non-empty string",
            id="tool-use-without-id",
        ),
        pytest.param([1, 2, 3], "the answer must be a JSON object, got a list", id="array-body"),
        pytest.param("hello", "the answer must be a JSON object, got a string", id="string-body"),
        pytest.param(
            _message("just text"), "content[0] must be an object, got a string", id="text-block"
        ),
        pytest.param(
            _message({"type": "tool_use", "id": {"a": 1}, "name": "lookup", "input": {}}),
            "content[0].id must be a string or null, got an object",
            id="id-object",
        ),
        pytest.param(
            _message({"type": "tool_use", "id": "t1", "name": ["lookup"], "input": {}}),
            "content[0].name must be a string or null, got a list",
            id="name-list",
        ),
    ],
)
async def test_a_malformed_claude_answer_is_a_model_error(body: object, reason: str) -> None:
    """respond() fails with ModelError(unexpected_response) whose message names the field."""
    async with raw_server(json_reply(body)) as server:
        with pytest.raises(ModelError) as failed:
            await _model(server.port).respond(REQUEST)

    assert "(unexpected_response)" in str(failed.value)
    assert reason in str(failed.value)


def _events(*events: object) -> str:
    return "".join(f"event: x\ndata: {json.dumps(e)}\n\n" for e in events)


@pytest.mark.parametrize(
    ("events", "reason"),
    [
        pytest.param(
            [[1, 2]], "a stream event must be a JSON object, got a list", id="array-event"
        ),
        pytest.param(
            [{"type": "message_start", "message": ["m"]}],
            "message_start.message must be an object, got a list",
            id="message-list",
        ),
        pytest.param(
            [{"type": "content_block_start", "index": 0, "content_block": "text"}],
            "content_block must be an object, got a string",
            id="block-string",
        ),
        pytest.param(
            [
                {"type": "content_block_start", "index": 0, "content_block": CALL_WITHOUT_ID},
                {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}},
                {"type": "message_stop"},
            ],
            "content[0].id must be a non-empty string",
            id="streamed-call-without-id",
        ),
    ],
)
async def test_a_malformed_claude_stream_is_a_model_error(
    events: list[object], reason: str
) -> None:
    """stream() fails the same way on a hostile event."""
    async with raw_server(sse_reply(_events(*events), done=False)) as server:
        with pytest.raises(ModelError) as failed:
            async for _ in _model(server.port).stream(REQUEST):
                pass

    assert "(unexpected_response)" in str(failed.value)
    assert reason in str(failed.value)
