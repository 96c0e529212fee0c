"""A provider's reasoning reaches the run's events: thinking text, summaries and thoughts as
text, signatures and encrypted content as opaque values, never decrypted."""

from __future__ import annotations

import base64
from collections.abc import AsyncGenerator

import pytest

from swarmkit import Agent, Swarm, tool
from swarmkit.events import Event, ModelCallFinished
from swarmkit.messages import AssistantMessage, ProviderState, Reasoning
from swarmkit.models import reasoning_of
from tests.models.state_server import call, say, state_server
from tests.models.test_provider_state import PROVIDERS


@tool
def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: shipped"


def _gemini_signature(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


EXPECTED = {
    "anthropic": [
        Reasoning(texts=("plan 1",), encrypted=("sig-1",)),
        Reasoning(texts=("plan 2",), encrypted=("sig-2",)),
    ],
    "gemini": [Reasoning(encrypted=(_gemini_signature("gsig-1-0"),)), None],
    "chat": [
        Reasoning(texts=("thought 1",), encrypted=("csig-1-0",)),
        Reasoning(texts=("thought 2",)),
    ],
    "responses": [Reasoning(encrypted=("enc-1",)), Reasoning(encrypted=("enc-2",))],
}
"""What each API's answers carry on the loopback server: a tool turn, then an answer."""


async def _events(swarm: Swarm, streams: bool) -> list[Event]:
    """A run's events: streamed, or watched on a run that does not stream."""
    if streams:
        return [event async for event in swarm.stream("Where?")]
    seen: list[Event] = []

    async def watch(events: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
        async for event in events:
            seen.append(event)
            yield event

    await swarm.with_observers(watch).run("Where?")
    return seen


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_each_model_call_finished_event_carries_the_providers_reasoning(
    provider: str,
) -> None:
    """Streamed or not, every model call's event holds the reasoning its answer came with."""
    for streams in (False, True):
        async with state_server(call("lookup", order="A1"), say("done")) as server:
            agent = Agent(name="a", instructions="Help.", tools=[lookup])
            swarm = Swarm([agent], "a", model=PROVIDERS[provider](server))
            events = await _events(swarm, streams)

        finished = [e.reasoning for e in events if isinstance(e, ModelCallFinished)]
        assert finished == EXPECTED[provider]


def test_a_summary_and_encrypted_content_of_a_responses_reasoning_item() -> None:
    """A reasoning item's summary parts are text; its encrypted content stays opaque."""
    item = {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "Checked the order."}],
        "encrypted_content": "gAAAA-opaque",
    }
    state = ProviderState(provider="openai-responses", data={"items": [item]})
    message = AssistantMessage(content="ok", provider_state=state)

    assert reasoning_of(message) == Reasoning(
        texts=("Checked the order.",), encrypted=("gAAAA-opaque",)
    )


def test_redacted_thinking_and_a_foreign_provider_state() -> None:
    """Redacted thinking is opaque; state of an API that keeps no reasoning gives none."""
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgB-opaque"}
    anthropic = ProviderState(provider="anthropic", data={"blocks": [redacted]})
    unknown = ProviderState(provider="elsewhere", data={"reasoning": "hidden"})

    assert reasoning_of(AssistantMessage(provider_state=anthropic)) == Reasoning(
        encrypted=("EmwKAhgB-opaque",)
    )
    assert reasoning_of(AssistantMessage(content="hi", provider_state=unknown)) is None
