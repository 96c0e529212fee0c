"""One swarm on three providers: Anthropic triage, a Gemini specialist, an OpenAI finisher.

Each hop converts the history into the next API's valid form; the run is journaled and
replayed with zero calls. The loopback server refuses any request that breaks a provider's
rule, so a dropped signature or a foreign one sent where it does not belong fails the run.
"""

from __future__ import annotations

import json

from swarmkit import Agent, InMemoryJournal, Swarm, tool
from swarmkit.messages import AssistantMessage
from swarmkit.models import (
    AnthropicModel,
    GeminiModel,
    OpenAIModel,
    OpenAIResponsesModel,
    RetryPolicy,
    model_from_string,
)
from swarmkit.testing import NeverCalledModel
from tests.models.state_server import StateServer, bodies, call, say, state_server

ONE_TRY = RetryPolicy(max_attempts=1)


@tool
def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: shipped"


def _swarm(server: StateServer) -> Swarm:
    finisher = Agent(
        name="finisher",
        instructions="Write the reply.",
        model=OpenAIModel(
            "gpt-test", base_url=f"{server.url}/v1", api_key="sk-test-1", retry=ONE_TRY
        ),
    )
    specialist = Agent(
        name="specialist",
        instructions="Investigate, then pass to the finisher.",
        tools=[lookup],
        handoffs=[finisher],
        model=GeminiModel(
            "gemini-test", base_url=f"{server.url}/gemini", api_key="AIza-1", retry=ONE_TRY
        ),
    )
    triage = Agent(
        name="triage",
        instructions="Look the order up, then pass to the specialist.",
        tools=[lookup],
        handoffs=[specialist],
        model=AnthropicModel(
            "claude-test",
            base_url=f"{server.url}/anthropic",
            api_key="sk-ant-1",
            thinking_budget=1024,
            retry=ONE_TRY,
        ),
    )
    return Swarm([triage, specialist, finisher], "triage")


SCRIPT = (
    call("lookup", order="A1"),  # triage, Anthropic
    call("transfer_to_specialist"),
    call("lookup", order="A2"),  # specialist, Gemini
    call("transfer_to_finisher"),
    say("Both orders shipped."),  # finisher, Chat Completions
)


async def test_a_swarm_hands_off_across_three_providers_and_replays_with_no_call() -> None:
    """Triage -> specialist -> finisher on three APIs; replay makes zero requests."""
    journal = InMemoryJournal()
    async with state_server(*SCRIPT) as server:
        swarm = _swarm(server)
        live = await swarm.run("Where are A1 and A2?", session_id="mixed", journal=journal)
        sent = len(server.requests)
        replayed = await swarm.replay("mixed", journal)

    assert server.refusals == []
    assert (live.trail, live.final_output) == (
        ("triage", "specialist", "finisher"),
        "Both orders shipped.",
    )
    assert len(server.requests) == sent == 5
    assert (replayed.trail, replayed.final_output) == (live.trail, live.final_output)
    assert replayed.messages == live.messages


async def test_each_provider_sees_only_its_own_reasoning_state() -> None:
    """Claude's signed thinking never reaches Gemini or OpenAI; Gemini's signatures never reach
    OpenAI; Gemini gets its stand-in signature on Claude's calls."""
    async with state_server(*SCRIPT) as server:
        await _swarm(server).run("Where are A1 and A2?")

    gemini_body = json.dumps(bodies(server, "gemini")[0])
    assert "sig-1" not in gemini_body and "thinking" not in gemini_body
    assert "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I=" in gemini_body
    finisher_body = json.dumps(bodies(server, "chat")[0])
    assert "sig-" not in finisher_body and "thought_signature" not in finisher_body
    assert "thoughtSignature" not in finisher_body


async def test_the_journal_keeps_every_providers_state_verbatim() -> None:
    """The replayed turns carry the very signatures the servers issued."""
    journal = InMemoryJournal()
    async with state_server(*SCRIPT) as server:
        await _swarm(server).run("Where?", session_id="s", journal=journal)
    no_calls = _swarm(server).with_model(NeverCalledModel())

    replayed = await no_calls.replay("s", journal)

    turns = [m for m in replayed.messages if isinstance(m, AssistantMessage)]
    first = turns[0].provider_state
    assert first is not None and first.data["blocks"][0]["signature"] == "sig-1"
    gemini_call = turns[2].tool_calls[0].provider_state
    assert gemini_call is not None and gemini_call.provider == "google"
    assert gemini_call.data["thought_signature"]


def test_model_strings_name_each_provider_and_plain_names_stay_openai() -> None:
    """Prefixes pick the adapter; an unprefixed name (colons and all) is Chat Completions."""
    assert isinstance(model_from_string("anthropic:claude-sonnet-4-6"), AnthropicModel)
    assert isinstance(model_from_string("google:gemini-3-pro"), GeminiModel)
    assert isinstance(model_from_string("openai-responses:gpt-5"), OpenAIResponsesModel)
    named = model_from_string("openai:gpt-4o")
    assert type(named) is OpenAIModel and named.name == "gpt-4o"
    plain = model_from_string("llama3:8b")
    assert type(plain) is OpenAIModel and plain.name == "llama3:8b"


def test_agents_on_different_provider_strings_share_one_swarm() -> None:
    """A swarm resolves each agent's string to its own adapter, built once per string."""
    claude = Agent(name="a", model="anthropic:claude-sonnet-4-6", handoffs=["b"])
    gemini = Agent(name="b", model="google:gemini-3-pro")

    swarm = Swarm([claude, gemini], "a", model="gpt-4o")

    models = {name: type(plan.model) for name, plan in swarm.plans.items()}
    assert models == {"a": AnthropicModel, "b": GeminiModel}


async def test_a_thinking_claude_takes_over_from_gemini_mid_tool_turn() -> None:
    """Gemini's handoff call has no signed thinking, which a thinking Claude would need: that
    turn reaches Claude as text, and the run goes on."""
    async with state_server(call("transfer_to_claude"), say("Claude here.")) as server:
        claude = Agent(
            name="claude",
            model=AnthropicModel(
                "claude-test",
                base_url=f"{server.url}/anthropic",
                api_key="sk-ant-1",
                thinking_budget=1024,
                retry=ONE_TRY,
            ),
        )
        gemini = Agent(
            name="gemini",
            handoffs=[claude],
            model=GeminiModel(
                "gemini-test", base_url=f"{server.url}/gemini", api_key="AIza-1", retry=ONE_TRY
            ),
        )
        result = await Swarm([gemini, claude], "gemini").run("Hand me to Claude.")

    assert (result.trail, result.final_output) == (("gemini", "claude"), "Claude here.")
    assert server.refusals == []
    told = bodies(server, "anthropic")[0]["messages"][-1]
    assert told["role"] == "user" and "Called transfer_to_claude" in json.dumps(told)
