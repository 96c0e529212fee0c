"""UsageLimits(per="conversation"): a conversation's earlier turns count against its budget."""

from __future__ import annotations

import pytest

from swarmkit import Agent, ConfigurationError, InMemoryJournal, RunResult, Swarm, UsageLimits
from swarmkit.models import Usage
from swarmkit.testing import NeverCalledModel, ScriptedModel, text, transfer

TEN = Usage(prompt_tokens=7, completion_tokens=3, total_tokens=10)


def _swarm(model: object, limits: UsageLimits, journal: InMemoryJournal | None = None) -> Swarm:
    agent = Agent(name="support", instructions="Answer.")
    return Swarm([agent], "support", model=model, limits=limits, journal=journal)  # type: ignore[arg-type]


async def test_a_spent_conversation_stops_the_next_turn_before_a_model_is_paid() -> None:
    """Two calls allowed over the conversation: the third turn stops with usage_limit and
    makes no model call (the script has no turn left for it)."""
    limits = UsageLimits(max_model_calls=2, per="conversation")
    swarm = _swarm(ScriptedModel(text("one"), text("two")), limits)

    first = await swarm.run("hi")
    second = await swarm.run("and?", history=first)
    third = await swarm.run("more?", history=second)

    assert [r.stop_reason for r in (first, second)] == ["final_output", "final_output"]
    assert third.stop_reason == "usage_limit"
    assert third.turns == 0
    assert third.limit is not None and third.limit.limit == "max_model_calls"
    assert third.limit.used == 2
    assert third.conversation_spent.model_calls == 2


async def test_per_run_limits_start_afresh_each_turn() -> None:
    """The default counts per run: the same third turn goes on."""
    swarm = _swarm(
        ScriptedModel(text("one"), text("two"), text("three")), UsageLimits(max_model_calls=2)
    )

    first = await swarm.run("hi")
    second = await swarm.run("and?", history=first)
    third = await swarm.run("more?", history=second)

    assert third.stop_reason == "final_output"
    assert third.final_output == "three"
    assert third.conversation_spent.model_calls == 3  # reported either way


async def test_tokens_over_a_journaled_conversation_stop_it_and_the_stop_replays() -> None:
    """Tokens count across turns continued from the journal; the stopped turn replays with
    zero calls and the same stop."""
    journal = InMemoryJournal()
    limits = UsageLimits(max_total_tokens=20, per="conversation")
    model = ScriptedModel(text("one", usage=TEN), text("two", usage=TEN))
    swarm = _swarm(model, limits, journal)

    await swarm.run("hi", session_id="chat")
    await swarm.run("and?", session_id="chat", continue_session=True)
    stopped = await swarm.run("more?", session_id="chat", continue_session=True)

    assert stopped.session_id == "chat__turn_3"
    assert stopped.stop_reason == "usage_limit"
    assert stopped.turns == 0
    assert stopped.conversation_spent.usage.total_tokens == 20
    replayed = await swarm.with_model(NeverCalledModel()).replay("chat__turn_3")
    assert replayed.stop_reason == "usage_limit"
    assert replayed.limit == stopped.limit


def test_the_spent_figures_survive_the_result_codec() -> None:
    """RunResult.to_data/from_data (engines, servers) keep the conversation's spend."""
    swarm = _swarm(ScriptedModel(text("one", usage=TEN)), UsageLimits(per="conversation"))
    result = swarm.run_sync("hi")

    again = RunResult.from_data(result.to_data())

    assert again.conversation_spent == result.conversation_spent
    assert again.conversation_spent.usage.total_tokens == 10


def test_an_unknown_scope_is_a_configuration_error() -> None:
    """per= takes "run" or "conversation"; anything else says so."""
    with pytest.raises(ConfigurationError, match="per must be 'run' or 'conversation'"):
        UsageLimits(per="session")  # type: ignore[arg-type]


def _desk(model: ScriptedModel, per: str, journal: InMemoryJournal) -> Swarm:
    """triage, billing and refunds, each free to hand off to the others."""
    agents = [
        Agent(name=name, instructions=f"You are {name}.")
        for name in ("triage", "billing", "refunds")
    ]
    return Swarm(agents, "triage", model=model, journal=journal, max_handoffs=1, handoffs_per=per)  # type: ignore[arg-type]


async def test_handoffs_per_conversation_count_the_earlier_turns() -> None:
    """max_handoffs=1 over the conversation: turn 1 hands off once, so turn 2's handoff is
    refused (max_handoffs) and the agent answers itself; per run, it goes through."""
    script = (transfer("billing"), text("billed"), transfer("refunds"), text("answered here"))
    results = {}
    for per in ("conversation", "run"):
        model = ScriptedModel(*script, text("refunded"))
        swarm = _desk(model, per, InMemoryJournal())
        await swarm.run("charge?", session_id="c", continue_session=True)
        results[per] = await swarm.run("refund?", session_id="c", continue_session=True)

    by_conversation, by_run = results["conversation"], results["run"]
    assert by_conversation.handoffs == () and by_conversation.stop_reason == "max_handoffs"
    assert "the conversation has used all 1 handoffs" in by_conversation.refusals[0]
    assert by_conversation.conversation_spent.handoffs == 1
    assert [h.target for h in by_run.handoffs] == ["refunds"]
    assert by_run.conversation_spent.handoffs == 2


async def test_a_handoff_back_to_an_earlier_turns_agent_is_a_cycle_per_conversation() -> None:
    """Turn 1 went triage -> billing; turn 2 (billing) handing back to triage closes a cycle
    counted over the conversation, and the refusal replays."""
    model = ScriptedModel(transfer("billing"), text("billed"), transfer("triage"), text("here"))
    journal = InMemoryJournal()
    agents = [Agent(name=name, instructions=f"You are {name}.") for name in ("triage", "billing")]
    swarm = Swarm(agents, "triage", model=model, journal=journal, handoffs_per="conversation")

    await swarm.run("charge?", session_id="c", continue_session=True)
    second = await swarm.run("and?", session_id="c", continue_session=True)

    assert second.stop_reason == "cycle"
    assert second.trail == ("billing",)
    assert "would close a cycle" in second.refusals[0]
    replayed = await swarm.with_model(NeverCalledModel()).replay(second.session_id)
    assert replayed.stop_reason == "cycle" and replayed.refusals == second.refusals


def test_an_unknown_handoff_scope_is_a_configuration_error() -> None:
    """handoffs_per takes "run" or "conversation"."""
    with pytest.raises(ConfigurationError, match="handoffs_per must be 'run' or 'conversation'"):
        Swarm([Agent(name="a")], "a", model=ScriptedModel(), handoffs_per="turn")  # type: ignore[arg-type]
