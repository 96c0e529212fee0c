"""UsageLimits: model calls, tokens, tool calls and cost, over the whole run."""

from __future__ import annotations

import pytest

from swarmkit import Agent, ConfigurationError, RunResult, Swarm, UsageLimits, tool
from swarmkit.journal import InMemoryJournal
from swarmkit.models import Usage
from swarmkit.testing import NeverCalledModel, ScriptedModel, text, tool_call, transfer


@tool
def look() -> str:
    """Look around."""
    return "seen"


def _looker(model: ScriptedModel, limits: UsageLimits | None = None) -> Swarm:
    return Swarm([Agent(name="a", tools=[look])], "a", model=model, limits=limits)


async def test_max_model_calls_stops_before_the_call_that_does_not_fit() -> None:
    """With two calls allowed, the third is never made and the run says so."""
    model = ScriptedModel(tool_call("look"), tool_call("look"))

    result = await _looker(model, UsageLimits(max_model_calls=2)).run("x")

    assert result.stop_reason == "usage_limit"
    assert result.limit is not None
    assert (result.limit.limit, result.limit.allowed, result.limit.used) == (
        "max_model_calls",
        2,
        2,
    )
    model.assert_exhausted()


async def test_a_token_limit_breached_by_an_answer_ends_the_run_after_it() -> None:
    """The answer that goes past max_total_tokens is kept; nothing after it runs."""
    model = ScriptedModel(tool_call("look"), tool_call("look"))

    result = await _looker(model, UsageLimits(max_total_tokens=20)).run("x")

    assert result.stop_reason == "usage_limit"
    assert result.limit is not None
    assert (result.limit.limit, result.limit.used) == ("max_total_tokens", 30)
    assert result.turns == 2
    model.assert_exhausted()


async def test_a_call_is_not_made_when_the_tokens_are_used_up() -> None:
    """At exactly the limit, the next call cannot fit and is not made."""
    model = ScriptedModel(tool_call("look"))

    result = await _looker(model, UsageLimits(max_input_tokens=10)).run("x")

    assert result.limit is not None
    assert (result.limit.limit, result.limit.used) == ("max_input_tokens", 10)
    assert result.turns == 1


async def test_output_tokens_have_their_own_limit() -> None:
    """max_output_tokens counts completion tokens."""
    model = ScriptedModel(tool_call("look"), tool_call("look"))

    result = await _looker(model, UsageLimits(max_output_tokens=6)).run("x")

    assert result.limit is not None
    assert (result.limit.limit, result.limit.used) == ("max_output_tokens", 10)


async def test_max_tool_calls_stops_before_the_call_over_the_limit() -> None:
    """One tool call allowed: the second is not run."""
    runs: list[str] = []

    @tool
    def count() -> str:
        """Count a call."""
        runs.append("ran")
        return "ok"

    model = ScriptedModel(tool_call("count"), tool_call("count"))
    swarm = Swarm([Agent(name="a", tools=[count])], "a", model=model)

    result = await swarm.run("x", limits=UsageLimits(max_tool_calls=1))

    assert result.stop_reason == "usage_limit"
    assert result.limit is not None and result.limit.limit == "max_tool_calls"
    assert runs == ["ran"]


async def test_limits_count_every_agent_of_the_run() -> None:
    """Calls of a and of b add up against one limit."""
    model = ScriptedModel(transfer("b"), tool_call("look"))
    agents = [Agent(name="a"), Agent(name="b", tools=[look])]
    swarm = Swarm(agents, "a", model=model, limits=UsageLimits(max_model_calls=2))

    result = await swarm.run("x")

    assert result.stop_reason == "usage_limit"
    assert result.trail == ("a", "b")
    assert result.final_agent == "b"


async def test_the_cost_function_prices_each_call_and_max_cost_stops_the_run() -> None:
    """cost(model, usage) is summed into result.cost; past max_cost the run stops."""
    priced: list[tuple[str, int]] = []

    def cost(model: str, usage: Usage) -> float:
        priced.append((model, usage.total_tokens))
        return usage.total_tokens * 0.01

    limits = UsageLimits(max_cost=0.25, cost=cost)
    model = ScriptedModel(tool_call("look"), tool_call("look"), name="gpt-test")

    result = await _looker(model, limits).run("x")

    assert result.stop_reason == "usage_limit"
    assert result.limit is not None and result.limit.limit == "max_cost"
    assert result.cost == pytest.approx(0.30)
    assert priced == [("gpt-test", 15), ("gpt-test", 15)]


async def test_the_cost_is_reported_without_a_cost_limit() -> None:
    """A cost function alone reports the cost; the run finishes normally."""
    limits = UsageLimits(cost=lambda model, usage: 1.5)

    result = await _looker(ScriptedModel(text("hi")), limits).run("x")

    assert (result.stop_reason, result.cost) == ("final_output", 1.5)


async def test_the_last_allowed_call_can_be_made_to_answer() -> None:
    """answer_on_last_call=True: the last call has tool_choice='none' and ends the run."""
    model = ScriptedModel(tool_call("look"), text("my answer"))
    limits = UsageLimits(max_model_calls=2, answer_on_last_call=True)

    result = await _looker(model, limits).run("x")

    assert model.requests[1].settings.tool_choice == "none"
    assert model.requests[0].settings.tool_choice is None
    assert (result.stop_reason, result.final_output) == ("usage_limit", "my answer")


async def test_a_usage_limited_run_resumes_with_larger_limits() -> None:
    """The usage counts over the whole session: resume goes on only with more allowed."""
    journal = InMemoryJournal()
    model = ScriptedModel(tool_call("look"), text("done"))
    swarm = _looker(model, UsageLimits(max_model_calls=1))
    first = await swarm.run("x", journal=journal)
    assert first.stop_reason == "usage_limit"

    resumed = await swarm.resume(first.session_id, journal, limits=UsageLimits(max_model_calls=2))

    assert (resumed.stop_reason, resumed.final_output, resumed.turns) == ("final_output", "done", 2)
    model.assert_exhausted()


async def test_a_limit_reached_inside_a_resumed_run_stops_it() -> None:
    """A resumed run meets its own limit (counted over the whole session) and stops there."""
    journal = InMemoryJournal()
    model = ScriptedModel(tool_call("look"), tool_call("look"), tool_call("look"))
    swarm = _looker(model, UsageLimits(max_model_calls=1))
    first = await swarm.run("x", journal=journal)

    resumed = await swarm.resume(first.session_id, journal, limits=UsageLimits(max_model_calls=3))

    assert resumed.stop_reason == "usage_limit"
    assert resumed.limit is not None and resumed.limit.used == 3
    model.assert_exhausted()


async def test_a_replayed_usage_limit_stops_at_the_same_place() -> None:
    """Replay reproduces the stop with zero model calls."""
    journal = InMemoryJournal()
    limits = UsageLimits(max_total_tokens=20)
    recorded = await _looker(ScriptedModel(tool_call("look"), tool_call("look")), limits).run(
        "x", journal=journal
    )
    replaying = Swarm([Agent(name="a", tools=[look])], "a", model=NeverCalledModel(), limits=limits)

    replayed = await replaying.replay(recorded.session_id, journal)

    assert (replayed.stop_reason, replayed.limit) == ("usage_limit", recorded.limit)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"max_model_calls": -1}, "max_model_calls"),
        ({"max_total_tokens": 1.5}, "max_total_tokens"),
        ({"max_cost": 1.0}, "needs cost="),
        ({"cost": "cheap"}, "cost must be a function"),
    ],
)
def test_usage_limits_are_checked_at_construction(options: dict[str, object], match: str) -> None:
    """A negative count, a cost limit without a cost function: configuration errors."""
    with pytest.raises(ConfigurationError, match=match):
        UsageLimits(**options)  # type: ignore[arg-type]


async def test_the_limit_and_the_cost_survive_the_result_as_data() -> None:
    """RunResult.to_data / from_data keep the breach and the cost (the RunFinished event's)."""
    limits = UsageLimits(max_model_calls=1, cost=lambda model, usage: 0.5)
    result = await _looker(ScriptedModel(tool_call("look")), limits).run("x")

    again = RunResult.from_data(result.to_data())

    assert (again.limit, again.cost) == (result.limit, 0.5)
    assert again.limit is not None and again.limit.stop_reason == "usage_limit"


async def test_sub_run_tokens_count_in_the_parent_and_the_limits_bind_the_sub_run() -> None:
    """A delegated sub-run's tokens count against the parent's limit; the sub-run has it too."""
    helper_model = ScriptedModel(tool_call("look"), tool_call("look"), tool_call("look"))
    helper = Agent(name="helper", tools=[look], handoffs=[], model=helper_model)
    boss_model = ScriptedModel(tool_call("ask_helper", input="check"), text("never"))
    boss = Agent(name="boss", tools=[helper.as_tool()], handoffs=[], model=boss_model)
    swarm = Swarm([boss, helper], "boss")

    result = await swarm.run("x", limits=UsageLimits(max_total_tokens=40))

    assert result.stop_reason == "usage_limit"
    assert result.limit is not None and result.limit.limit == "max_total_tokens"
    # boss 15; helper 45, stopped by the limit after its third answer went past 40
    assert result.total_usage.total_tokens == 60
    assert result.turns == 1
    helper_model.assert_exhausted()


async def test_the_console_shows_the_limit_and_the_cost() -> None:
    """The run's ending and the journal's timeline name the limit; the ending shows the cost."""
    from swarmkit.console import result_lines, timeline  # noqa: PLC0415 - console views only

    journal = InMemoryJournal()
    limits = UsageLimits(max_model_calls=1, cost=lambda model, usage: 0.25)
    result = await _looker(ScriptedModel(tool_call("look")), limits).run("x", journal=journal)

    ending = "\n".join(result_lines(result))
    assert "limit:  max_model_calls=1 reached: the run used 1 model call (agent a)" in ending
    assert "cost:   0.25" in ending
    steps = "\n".join(timeline(await journal.read(result.session_id)))
    assert "limit    max_model_calls=1 reached" in steps
