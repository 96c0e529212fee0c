"""Swarm runs through the Responses adapter, alone and mixed with Chat Completions agents."""

from __future__ import annotations

import json

import respx

from swarmkit import Agent, Swarm
from swarmkit.journal import InMemoryJournal
from swarmkit.models import OpenAIModel, OpenAIResponsesModel
from tests.models.fake_openai import BASE_URL, MODEL, completion, mocked_client, tool_call_json
from tests.models.fake_responses import answer, call_item, fake_responses_api


async def test_chat_and_responses_agents_share_one_swarm_and_its_journal() -> None:
    """Triage on Chat Completions hands off to billing on Responses; replay makes no calls."""
    router = respx.Router(base_url=BASE_URL, assert_all_mocked=True)
    chat = router.post("/chat/completions").mock(
        side_effect=[
            completion(None, tool_calls=[tool_call_json("c1", "transfer_to_billing", "{}")])
        ]
    )
    responses = router.post("/responses").mock(side_effect=[answer("Refund sent.")])
    client = mocked_client(router)
    billing = Agent(
        name="billing", instructions="Billing.", model=OpenAIResponsesModel(MODEL, client=client)
    )
    triage = Agent(name="triage", instructions="Triage.", model=OpenAIModel(MODEL, client=client))
    journal = InMemoryJournal()
    swarm = Swarm([triage, billing], "triage", journal=journal)

    result = await swarm.run("Refund me", session_id="mixed")
    replayed = await swarm.replay("mixed")

    assert result.trail == ("triage", "billing")
    assert result.final_output == "Refund sent."
    sent = json.loads(responses.calls[0].request.content)["input"]
    assert sent[-2:] == [
        {
            "type": "function_call",
            "call_id": "c1",
            "name": "transfer_to_billing",
            "arguments": "{}",
        },
        {"type": "function_call_output", "call_id": "c1", "output": "Transferred to billing."},
    ]
    assert replayed.final_output == "Refund sent."
    assert (chat.call_count, responses.call_count) == (1, 1)


async def test_a_responses_tool_round_trip_through_the_swarm() -> None:
    """A function call on the Responses API runs the tool and its output goes back by call id."""
    router = respx.Router(base_url=BASE_URL, assert_all_mocked=True)
    route = router.post("/responses").mock(
        side_effect=[answer(None, calls=[call_item("c9", "transfer_to_b", "{}")]), answer("Done.")]
    )
    model = OpenAIResponsesModel(MODEL, client=mocked_client(router))
    swarm = Swarm([Agent(name="a"), Agent(name="b")], "a", model=model)

    result = await swarm.run("go")

    assert result.final_output == "Done."
    assert route.call_count == 2


async def test_a_continued_conversation_sends_the_earlier_turn_as_input_items() -> None:
    """history= over the Responses API: the second request holds the first turn's messages."""
    api = fake_responses_api(answer("Hi Ann."), answer("Your name is Ann."))
    swarm = Swarm([Agent(name="a", instructions="Be kind.")], "a", model=api.model)

    first = await swarm.run("I am Ann.")
    second = await swarm.run("What is my name?", history=first)

    assert api.body(1)["input"] == [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "I am Ann."},
        {"role": "assistant", "content": "Hi Ann."},
        {"role": "user", "content": "What is my name?"},
    ]
    assert second.final_output == "Your name is Ann."
