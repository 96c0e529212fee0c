"""Reasoning state survives every path: live turns, handoffs, filters, resume and replay.

Each provider's rule is enforced by a loopback server that refuses a follow-up without the
state it issued (signed thinking, thought signatures, reasoning items), as the services do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from swarmkit import Agent, Handoff, InMemoryJournal, ModelError, Swarm, tool
from swarmkit.events import RunFinished, TextDelta
from swarmkit.filters import HandoffInput, last_messages, remove_tool_calls, repair_tool_pairs
from swarmkit.messages import (
    AssistantMessage,
    Message,
    ProviderState,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from swarmkit.models import (
    AnthropicModel,
    GeminiModel,
    Model,
    ModelRequest,
    OpenAIModel,
    OpenAIResponsesModel,
    RetryPolicy,
)
from swarmkit.testing import NeverCalledModel
from tests.models.state_server import StateServer, call, fail, say, state_server

ONE_TRY = RetryPolicy(max_attempts=1)


def anthropic(server: StateServer) -> Model:
    """Claude with extended thinking, on the server."""
    return AnthropicModel(
        "claude-test",
        base_url=f"{server.url}/anthropic",
        api_key="sk-ant-test-key-123456",
        thinking_budget=1024,
        retry=ONE_TRY,
    )


def gemini(server: StateServer) -> Model:
    """Gemini, natively, on the server."""
    return GeminiModel(
        "gemini-test", base_url=f"{server.url}/gemini", api_key="AIza-test", retry=ONE_TRY
    )


def chat(server: StateServer) -> Model:
    """Gemini through the OpenAI-compatible Chat Completions endpoint."""
    return OpenAIModel(
        "gemini-compat", base_url=f"{server.url}/v1", api_key="sk-test-key", retry=ONE_TRY
    )


def responses(server: StateServer) -> Model:
    """A reasoning model on the Responses API, nothing stored server-side."""
    return OpenAIResponsesModel(
        "o-test", base_url=f"{server.url}/v1", api_key="sk-test-key", retry=ONE_TRY
    )


PROVIDERS: dict[str, Callable[[StateServer], Model]] = {
    "anthropic": anthropic,
    "gemini": gemini,
    "chat": chat,
    "responses": responses,
}


@tool
def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: shipped"


def _agents(**handoff: object) -> list[Agent]:
    desk = Agent(name="desk", instructions="Answer.", tools=[lookup])
    front = Agent(
        name="front",
        instructions="Look orders up, then pass on.",
        tools=[lookup],
        handoffs=[Handoff(agent=desk, **handoff)],  # type: ignore[arg-type]
    )
    return [front, desk]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_state_goes_back_with_the_calls_of_a_live_tool_loop(provider: str) -> None:
    """Two tool turns then an answer: every follow-up carries the state its calls came with."""
    async with state_server(
        call("lookup", order="A1"), call("lookup", order="A2"), say("done")
    ) as server:
        agent = Agent(name="a", instructions="Help.", tools=[lookup])
        result = await Swarm([agent], "a", model=PROVIDERS[provider](server)).run("Where?")

    assert (result.stop_reason, result.final_output) == ("final_output", "done")
    assert server.refusals == []
    assert len(server.requests) == 3


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_state_goes_back_with_the_calls_of_a_streamed_tool_loop(provider: str) -> None:
    """Streamed turns assemble the same state (signatures arrive in their own events)."""
    turns = (call("lookup", order="A1"), say("done"))
    async with state_server(*turns) as server:
        agent = Agent(name="a", instructions="Help.", tools=[lookup])
        swarm = Swarm([agent], "a", model=PROVIDERS[provider](server))
        events = [event async for event in swarm.stream("Where?")]

    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert finished.result.final_output == "done"
    assert any(isinstance(e, TextDelta) for e in events)
    assert server.refusals == []
    assert len(server.requests) == 2


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_server_refuses_a_follow_up_whose_state_was_dropped(provider: str) -> None:
    """The rule is real: the same history without the state is refused with a 400."""
    async with state_server(call("lookup", order="A1"), say("never")) as server:
        model = PROVIDERS[provider](server)
        first = ModelRequest(messages=(UserMessage(content="Where?"),), agent="a")
        answer = await model.respond(first)
        stripped = replace(
            answer.message,
            provider_state=None,
            tool_calls=tuple(replace(c, provider_state=None) for c in answer.message.tool_calls),
        )
        result = ToolMessage(tool_call_id=stripped.tool_calls[0].id, name="lookup", content="ok")
        with pytest.raises(ModelError) as raised:
            await model.respond(replace(first, messages=(*first.messages, stripped, result)))

    assert raised.value.status_code == 400
    assert len(server.refusals) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_state_survives_a_handoff_to_an_agent_on_the_same_provider(provider: str) -> None:
    """The receiving agent's first call sends back the calls its peer made, with their state."""
    turns = (call("lookup", order="A1"), call("transfer_to_desk"), call("lookup", order="B2"))
    async with state_server(*turns, say("desk done")) as server:
        swarm = Swarm(_agents(), "front", model=PROVIDERS[provider](server))
        result = await swarm.run("Where?")

    assert (result.trail, result.final_output) == (("front", "desk"), "desk done")
    assert server.refusals == []


def _drop_the_prompt(data: HandoffInput) -> list[Message]:
    """A filter that keeps only the front agent's own items (its calls and their results)."""
    return list(data.new_items)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("kept", [_drop_the_prompt, last_messages(4)])
async def test_state_survives_a_filter_that_keeps_the_calls(
    provider: str, kept: Callable[[HandoffInput], list[Message]]
) -> None:
    """A filter that keeps a call keeps the state that goes with it."""
    turns = (call("lookup", order="A1"), call("transfer_to_desk"), say("desk done"))
    async with state_server(*turns) as server:
        swarm = Swarm(_agents(input_filter=kept), "front", model=PROVIDERS[provider](server))
        result = await swarm.run("Where?")

    assert result.final_output == "desk done"
    assert server.refusals == []


def _reasoned_turn() -> AssistantMessage:
    signed = ProviderState(provider="google", data={"thought_signature": "c2ln"})
    return AssistantMessage(
        content="Checking both.",
        tool_calls=(
            ToolCall(id="c1", name="lookup", arguments="{}", provider_state=signed),
            ToolCall(id="c2", name="lookup", arguments="{}"),
        ),
        provider_state=ProviderState(provider="anthropic", data={"blocks": [{"type": "x"}]}),
    )


def test_a_filter_that_drops_every_call_drops_the_reasoning_that_led_to_them() -> None:
    """remove_tool_calls keeps the text of a reasoned turn, without its reasoning state."""
    data = HandoffInput(
        history=(UserMessage(content="q"), _reasoned_turn()),
        new_items=(),
        payload=None,
        message=None,
        source="front",
        target="desk",
    )

    kept = remove_tool_calls(data)

    assert isinstance(kept, list)
    assert kept[1] == AssistantMessage(content="Checking both.")


def test_a_repaired_history_keeps_reasoning_with_the_calls_that_stay() -> None:
    """A call whose result is gone is dropped; the turn keeps its reasoning, the kept call its
    signature."""
    history = (_reasoned_turn(), ToolMessage(tool_call_id="c1", name="lookup", content="ok"))

    turn = repair_tool_pairs(history)[0]

    assert isinstance(turn, AssistantMessage)
    assert [c.id for c in turn.tool_calls] == ["c1"]
    assert turn.provider_state == _reasoned_turn().provider_state
    assert turn.tool_calls[0].provider_state == _reasoned_turn().tool_calls[0].provider_state


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_state_survives_a_resume_from_the_journal(provider: str) -> None:
    """A run that failed after a tool call resumes; its next call sends the journaled state."""
    journal = InMemoryJournal()
    async with state_server(call("lookup", order="A1"), fail(500), say("resumed")) as server:
        agent = Agent(name="a", instructions="Help.", tools=[lookup])
        swarm = Swarm([agent], "a", model=PROVIDERS[provider](server))
        failed = await swarm.run("Where?", session_id="s", journal=journal)
        resumed = await swarm.resume("s", journal)

    assert failed.stop_reason == "error"
    assert (resumed.stop_reason, resumed.final_output) == ("final_output", "resumed")
    assert server.refusals == []


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_replay_returns_the_state_exactly_and_a_fork_sends_it_back(provider: str) -> None:
    """Replay makes no call and yields the same state; a fork going live sends it back."""
    journal = InMemoryJournal()
    turns = (call("lookup", order="A1"), say("first answer"), say("forked answer"))
    async with state_server(*turns) as server:
        agent = Agent(name="a", instructions="Help.", tools=[lookup])
        live = await Swarm([agent], "a", model=PROVIDERS[provider](server)).run(
            "Where?", session_id="s", journal=journal
        )
        replayed = await Swarm([agent], "a", model=NeverCalledModel()).replay("s", journal)
        forked = await Swarm([agent], "a", model=PROVIDERS[provider](server)).replay(
            "s", journal, live_after=await _last_model_call(journal)
        )

    assert replayed.messages == live.messages
    assert _states(replayed.messages) == _states(live.messages) != []
    assert forked.final_output == "forked answer"
    assert server.refusals == []


async def _last_model_call(journal: InMemoryJournal) -> int:
    return max(r.seq for r in await journal.read("s") if r.kind == "model_call")


def _states(messages: tuple[Message, ...]) -> list[object]:
    found: list[object] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            found.append(message.provider_state)
            found.extend(c.provider_state for c in message.tool_calls)
    return [s for s in found if s is not None]
