"""max_handoffs, handoff budgets, max_turns and cycle detection, with their exact semantics."""

from __future__ import annotations

import pytest

from swarmkit import (
    Agent,
    HandoffCycleError,
    HandoffGraph,
    MaxHandoffsExceeded,
    MaxTurnsExceeded,
    Swarm,
    ToolResult,
    tool,
)
from swarmkit.messages import ToolMessage
from swarmkit.swarm import LimitPolicy
from swarmkit.testing import ScriptedModel, ScriptedTurn, text, tool_call, transfer

from .conftest import tool_names


async def test_max_handoffs_one_performs_exactly_one_handoff() -> None:
    """max_handoffs=1 runs its one handoff's target, who answers without transfer tools."""
    model = ScriptedModel(transfer("b"), text("b answers"))
    swarm = Swarm([Agent(name="a"), Agent(name="b")], "a", model=model, max_handoffs=1)

    result = await swarm.run("x")

    assert result.trail == ("a", "b")
    assert result.final_output == "b answers"
    assert tool_names(model.requests[1]) == []
    assert result.stop_reason == "max_handoffs"
    model.assert_exhausted()


async def test_a_cap_that_withheld_nothing_ends_with_final_output() -> None:
    """a -> b under max_handoffs=1 where b had no peers to offer: the cap did not shape it."""
    model = ScriptedModel(transfer("b"), text("b answers"))
    swarm = Swarm([Agent(name="a"), Agent(name="b", handoffs=[])], "a", model=model, max_handoffs=1)

    result = await swarm.run("x")

    assert (result.trail, result.stop_reason) == (("a", "b"), "final_output")


async def test_a_cap_over_an_agent_whose_budget_is_spent_ends_with_final_output() -> None:
    """b's own handoff_budget=0 already withholds its transfers; the cap shaped nothing."""
    model = ScriptedModel(transfer("b"), text("b answers"))
    agents = [Agent(name="a"), Agent(name="b", handoff_budget=0)]
    swarm = Swarm(agents, "a", model=model, max_handoffs=1)

    result = await swarm.run("x")

    assert result.stop_reason == "final_output"


async def test_a_cap_over_a_rule_that_would_not_fire_ends_with_final_output() -> None:
    """b's only way on is a rule whose condition is false: nothing was withheld."""
    graph = HandoffGraph()
    graph.add_edge("a", "b", when="category == 'billing'")
    graph.add_edge("b", "c", when="category == 'refund'")
    agents = [Agent(name="a"), Agent(name="b", handoffs=[]), Agent(name="c")]
    swarm = Swarm(agents, "a", model=ScriptedModel(text("b answers")), max_handoffs=1, graph=graph)

    result = await swarm.run("x", context={"category": "billing"})

    assert (result.trail, result.stop_reason) == (("a", "b"), "final_output")


async def test_a_cap_over_a_rule_that_would_fire_ends_with_max_handoffs() -> None:
    """b's rule matches but the cap withholds it: the cap shaped the end."""
    graph = HandoffGraph()
    graph.add_edge("a", "b", when="category == 'billing'")
    graph.add_edge("b", "c", when="category == 'billing'")
    agents = [Agent(name="a"), Agent(name="b", handoffs=[]), Agent(name="c")]
    swarm = Swarm(agents, "a", model=ScriptedModel(text("b answers")), max_handoffs=1, graph=graph)

    result = await swarm.run("x", context={"category": "billing"})

    assert (result.trail, result.stop_reason) == (("a", "b"), "max_handoffs")


async def test_a_cap_that_refused_a_handoff_ends_with_max_handoffs() -> None:
    """b was offered no transfer, but its tool asked to go on to c, and the cap refused it."""

    @tool
    def escalate() -> ToolResult:
        """Send the ticket on."""
        return ToolResult(output="escalating", goto="c")

    model = ScriptedModel(transfer("b"), tool_call("escalate"), text("b answers"))
    b = Agent(name="b", handoffs=[], tools=[escalate])
    swarm = Swarm([Agent(name="a"), b, Agent(name="c")], "a", model=model, max_handoffs=1)

    result = await swarm.run("x")

    assert result.trail == ("a", "b")
    assert "max_handoffs" in result.refusals[0]
    assert result.stop_reason == "max_handoffs"


async def test_max_handoffs_zero_offers_no_transfer_tools() -> None:
    """With max_handoffs=0 the entry agent must answer, and the cap is reported."""
    model = ScriptedModel(text("alone"))
    swarm = Swarm([Agent(name="a"), Agent(name="b")], "a", model=model, max_handoffs=0)

    result = await swarm.run("x")

    assert tool_names(model.requests[0]) == []
    assert result.stop_reason == "max_handoffs"


async def test_run_under_the_cap_is_a_normal_finish() -> None:
    """Two handoffs under max_handoffs=3 end as final_output."""
    model = ScriptedModel(transfer("b"), transfer("c"), text("c answers"))
    swarm = Swarm([Agent(name=n) for n in "abc"], "a", model=model, max_handoffs=3)

    result = await swarm.run("x")

    assert result.trail == ("a", "b", "c")
    assert result.stop_reason == "final_output"


@tool
def go_to_c() -> ToolResult:
    """Hand the ticket to c."""
    return ToolResult(output="going", goto="c")


def _capped_swarm(policy: LimitPolicy, *then: ScriptedTurn) -> Swarm:
    """a hands off to b (the one handoff allowed); b's tool then asks for c."""
    model = ScriptedModel(transfer("b"), tool_call("go_to_c"), *then)
    agents = [Agent(name="a"), Agent(name="b", tools=[go_to_c]), Agent(name="c")]
    return Swarm(agents, "a", model=model, max_handoffs=1, on_max_handoffs=policy)


async def test_max_handoffs_stop_policy_returns_the_last_output() -> None:
    """on_max_handoffs='stop' ends the run when a handoff beyond the cap is asked for."""
    result = await _capped_swarm("stop").run("x")

    assert result.stop_reason == "max_handoffs"
    assert result.trail == ("a", "b")


async def test_max_handoffs_error_policy_raises() -> None:
    """on_max_handoffs='error' raises MaxHandoffsExceeded with the trail."""
    with pytest.raises(MaxHandoffsExceeded) as raised:
        await _capped_swarm("error").run("x")
    assert raised.value.trail == ("a", "b")


async def test_max_handoffs_finish_policy_refuses_and_the_agent_answers() -> None:
    """Under 'finish' the over-cap goto is refused with a reason; the run is reported capped."""
    swarm = _capped_swarm("finish")
    model = swarm.plans["a"].model
    assert isinstance(model, ScriptedModel)
    model._queue.append(text("b answers"))

    result = await swarm.run("x")

    assert result.stop_reason == "max_handoffs"
    assert "max_handoffs" in result.refusals[0]


async def test_a_b_a_cycle_is_caught_at_the_second_handoff() -> None:
    """B handing back to A is refused; B answers without transfer tools to agents on the trail."""
    model = ScriptedModel(transfer("b"), transfer("a"), text("b answers"))
    swarm = Swarm([Agent(name="a"), Agent(name="b")], "a", model=model)

    result = await swarm.run("x")

    assert result.trail == ("a", "b")
    assert result.stop_reason == "cycle"
    refusal = model.requests[2].messages[-1]
    assert isinstance(refusal, ToolMessage) and "cycle" in refusal.content
    assert "transfer_to_a" not in tool_names(model.requests[2])
    model.assert_exhausted()


async def test_a_b_c_a_cycle_is_caught_at_the_third_handoff() -> None:
    """A three-agent loop is refused when it would return to A."""
    model = ScriptedModel(transfer("b"), transfer("c"), transfer("a"), text("c answers"))
    swarm = Swarm([Agent(name=n) for n in "abc"], "a", model=model)

    result = await swarm.run("x")

    assert result.trail == ("a", "b", "c")
    assert result.stop_reason == "cycle"
    assert len(result.handoffs) == 2


async def test_cycle_error_policy_raises_with_the_cycle() -> None:
    """on_cycle='error' raises HandoffCycleError naming the cycle."""
    model = ScriptedModel(transfer("b"), transfer("a"))
    swarm = Swarm([Agent(name="a"), Agent(name="b")], "a", model=model, on_cycle="error")

    with pytest.raises(HandoffCycleError) as raised:
        await swarm.run("x")
    assert raised.value.cycle == ("a", "b", "a")


async def test_cycle_stop_policy_stops_with_the_last_text() -> None:
    """on_cycle='stop' ends the run at the refused handoff."""
    model = ScriptedModel(transfer("b"), transfer("a"))
    swarm = Swarm([Agent(name="a"), Agent(name="b")], "a", model=model, on_cycle="stop")

    result = await swarm.run("x")

    assert result.stop_reason == "cycle"
    assert result.trail == ("a", "b")


async def test_max_revisits_allows_a_deliberate_loop() -> None:
    """max_revisits=1 lets the research loop return once, then refuses the second return."""
    model = ScriptedModel(
        transfer("checker"),
        transfer("searcher"),
        transfer("checker"),
        transfer("searcher"),
        text("checker answers"),
    )
    swarm = Swarm(
        [Agent(name="searcher"), Agent(name="checker")], "searcher", model=model, max_revisits=1
    )

    result = await swarm.run("research")

    assert result.trail == ("searcher", "checker", "searcher", "checker")
    assert result.stop_reason == "cycle"


async def test_detect_cycles_false_allows_loops_until_max_handoffs() -> None:
    """Without cycle detection, a loop runs until the handoff cap."""
    model = ScriptedModel(transfer("b"), transfer("a"), transfer("b"), text("b answers"))
    swarm = Swarm(
        [Agent(name="a"), Agent(name="b")], "a", model=model, detect_cycles=False, max_handoffs=3
    )

    result = await swarm.run("x")

    assert result.trail == ("a", "b", "a", "b")
    assert result.stop_reason == "max_handoffs"


async def test_handoff_budget_withdraws_transfer_tools_once_used() -> None:
    """Seed 001: an agent with handoff_budget=1 gets no transfer tools after one handoff."""
    model = ScriptedModel(
        transfer("checker"),
        transfer("searcher"),
        text("searcher answers"),
    )
    swarm = Swarm(
        [Agent(name="searcher", handoff_budget=1), Agent(name="checker")],
        "searcher",
        model=model,
        detect_cycles=False,
    )

    result = await swarm.run("x")

    assert result.trail == ("searcher", "checker", "searcher")
    assert tool_names(model.requests[2]) == []


async def test_max_turns_finish_forces_an_answer_on_the_last_call() -> None:
    """The last allowed model call is made with tool_choice='none'; the run reports max_turns."""

    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    model = ScriptedModel(tool_call("ping"), text("final"))
    swarm = Swarm([Agent(name="a", tools=[ping])], "a", model=model, max_turns=2)

    result = await swarm.run("x")

    assert model.requests[1].settings.tool_choice == "none"
    assert result.final_output == "final"
    assert result.stop_reason == "max_turns"


async def test_max_turns_stop_policy_stops_when_the_calls_run_out() -> None:
    """on_max_turns='stop' ends the run when another call would exceed the cap."""

    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    model = ScriptedModel(tool_call("ping"))
    swarm = Swarm(
        [Agent(name="a", tools=[ping])], "a", model=model, max_turns=1, on_max_turns="stop"
    )

    result = await swarm.run("x")

    assert result.stop_reason == "max_turns"
    assert result.turns == 1


async def test_max_turns_error_policy_raises() -> None:
    """on_max_turns='error' raises MaxTurnsExceeded."""

    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    model = ScriptedModel(tool_call("ping"))
    swarm = Swarm(
        [Agent(name="a", tools=[ping])], "a", model=model, max_turns=1, on_max_turns="error"
    )

    with pytest.raises(MaxTurnsExceeded):
        await swarm.run("x")
