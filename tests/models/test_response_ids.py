"""Every adapter keeps the provider's id for its answer (traces show it as gen_ai.response.id)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from swarmkit.messages import UserMessage
from swarmkit.models import AnthropicModel, GeminiModel, ModelRequest, RetryPolicy
from swarmkit.models._anthropic_wire import StreamAssembler
from tests.models.state_server import say, state_server

ONE_TRY = RetryPolicy(max_attempts=1)
HELLO = ModelRequest(messages=(UserMessage(content="Hello"),))


async def test_anthropic_and_gemini_answers_carry_the_provider_s_id() -> None:
    """A Claude message's ``msg_`` id and a Gemini response's ``responseId``, through the SDKs."""
    async with state_server(say("hi"), say("hi")) as server:
        claude = AnthropicModel(
            "claude-test", base_url=f"{server.url}/anthropic", api_key="sk-ant-1", retry=ONE_TRY
        )
        gemini = GeminiModel(
            "gemini-test", base_url=f"{server.url}/gemini", api_key="AIza-1", retry=ONE_TRY
        )
        claude_answer = await claude.respond(HELLO)
        gemini_answer = await gemini.respond(HELLO)

    assert (claude_answer.id or "").startswith("msg_")
    assert (gemini_answer.id or "").startswith("gresp_")
    where = urlsplit(server.url)
    assert claude.server == (where.hostname, where.port)


def test_a_streamed_claude_message_keeps_the_id_of_its_start() -> None:
    """The id arrives on message_start and is the assembled response's."""
    assembler = StreamAssembler()
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_7", "model": "c", "usage": {}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "text", "text": "hi"},
        },
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
        {"type": "message_stop"},
    ]
    for event in events:
        assembler.add(event)

    assert assembler.response().id == "msg_7"


def test_the_default_servers_are_the_providers_own() -> None:
    """With no base URL, the span names the provider's API host on port 443."""
    assert AnthropicModel("claude-test", api_key="k-12345678").server == ("api.anthropic.com", 443)
    assert GeminiModel("gemini-test", api_key="k-12345678").server == (
        "generativelanguage.googleapis.com",
        443,
    )
