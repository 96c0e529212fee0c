"""UsageLimits(per="conversation"): a conversation's earlier turns count against its budget."""

from __future__ import annotations

import pytest

from swarmkit import Agent, ConfigurationError, InMemoryJournal, RunResult, Swarm, UsageLimits
from swarmkit.models import Usage
from swarmkit.testing import NeverCalledModel, ScriptedModel, text

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
