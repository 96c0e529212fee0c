"""OpenAI-compatible servers' own fields: streamed ``extra_content`` and ``reasoning_content``,
streamed Responses reasoning items, and request digests that only state changes."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from swarmkit.journal._digest import RequestDigester
from swarmkit.messages import AssistantMessage, ProviderState, ToolCall, ToolMessage, UserMessage
from swarmkit.models import ModelRequest, ModelResponse, OpenAIResponsesModel
from tests.models.raw_server import completion, json_reply, raw_server, sse_reply

SIGNATURE = {"google": {"thought_signature": "Cs4BAdHtim9"}}


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}


async def test_a_streamed_chat_turn_keeps_its_signature_and_reasoning_for_the_next_call() -> None:
    """extra_content on a streamed call and reasoning_content pieces go back on the next call."""
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "lookup", "arguments": "{}"},
        "extra_content": SIGNATURE,
    }
    stream = sse_reply(
        _chunk({"reasoning_content": "Look it "}),
        _chunk({"reasoning_content": "up."}),
        _chunk({"tool_calls": [call]}),
        _chunk({}, finish="tool_calls"),
    )
    answer = completion({"content": "shipped"})
    async with raw_server(stream, json_reply(answer)) as server:
        model = server.model()
        first = ModelRequest(messages=(UserMessage(content="Where?"),))
        items = [item async for item in model.stream(first)]
        turn = items[-1]
        assert isinstance(turn, ModelResponse)
        result = ToolMessage(tool_call_id="call_1", name="lookup", content="ok")
        await model.respond(replace(first, messages=(*first.messages, turn.message, result)))

    sent = json.loads(server.bodies[1])["messages"][1]
    assert sent["reasoning_content"] == "Look it up."
    assert sent["tool_calls"][0]["extra_content"] == SIGNATURE


async def test_a_streamed_responses_turn_keeps_its_reasoning_item() -> None:
    """The completed response's reasoning item (encrypted content) is the turn's state."""
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"}
    done = {
        "type": "response.completed",
        "response": {"status": "completed", "model": "o", "output": [reasoning], "usage": None},
    }
    async with raw_server(sse_reply(done, done=False)) as server:
        model = server.model(api=OpenAIResponsesModel)
        request = ModelRequest(messages=(UserMessage(content="Hi"),))
        items = [item async for item in model.stream(request)]

    last = items[-1]
    assert isinstance(last, ModelResponse)
    assert last.message.provider_state == ProviderState(
        provider="openai-responses", data={"items": [reasoning]}
    )


def test_state_changes_a_request_digest_and_a_turn_without_state_keeps_its_old_one() -> None:
    """Digests of state-free turns are what they always were; state is part of the digest."""
    plain = AssistantMessage(tool_calls=(ToolCall(id="c", name="t", arguments="{}"),))
    signed = replace(
        plain,
        tool_calls=(replace(plain.tool_calls[0], provider_state=ProviderState(
            provider="google", data={"thought_signature": "x"})),),
    )  # fmt: skip

    def digest(message: AssistantMessage) -> str:
        request = ModelRequest(messages=(UserMessage(content="q"), message), agent="a")
        return RequestDigester().digest(request)

    # The digest this request had before turns could carry state.
    assert digest(plain) == "e67129ec8759d2b7cd7e1b4d006169c43df4b6ecc070a4adb283b34bd9d8b259"
    assert digest(signed) != digest(plain)
