"""Rules first: the HandoffGraph decides before the model is paid for."""

from __future__ import annotations

import pytest

from swarmkit import Agent, ConfigurationError, Handoff, HandoffGraph, Swarm, ToolResult, tool
from swarmkit.drawing import draw_swarm
from swarmkit.testing import ScriptedModel, text, tool_call, transfer


def _triage_graph() -> HandoffGraph:
    graph = HandoffGraph()
    graph.add_edge("triage", "billing", when="category == 'billing'")
    graph.add_edge("triage", "tech", when="category == 'tech'")
    return graph


def _agents() -> list[Agent]:
    return [Agent(name="triage"), Agent(name="billing"), Agent(name="tech")]


async def test_matching_rule_hands_off_with_no_model_call() -> None:
    """A rule that matches routes the run; the router's model is never called."""
    model = ScriptedModel(text("billing answers", for_agent="billing"))
    swarm = Swarm(_agents(), "triage", model=model, graph=_triage_graph())

    result = await swarm.run("refund", context={"category": "billing"})

    assert [r.agent for r in model.requests] == ["billing"]
    assert [(h.target, h.decided_by, h.condition) for h in result.handoffs] == [
        ("billing", "rule", "category == 'billing'")
    ]
    assert [(d.agent, d.target, d.performed) for d in result.rule_decisions] == [
        ("triage", "billing", True)
    ]
    assert result.usage.get("triage") is None


async def test_no_matching_rule_lets_the_model_decide() -> None:
    """When no edge matches, the LLM decides with its transfer tools."""
    model = ScriptedModel(transfer("tech"), text("tech answers"))
    swarm = Swarm(_agents(), "triage", model=model, graph=_triage_graph())

    result = await swarm.run("hmm", context={"category": "other"})

    assert [(h.target, h.decided_by) for h in result.handoffs] == [("tech", "llm")]
    assert result.rule_decisions == ()


async def test_tool_context_update_can_trigger_a_rule() -> None:
    """The graph is consulted before every model call, so a tool's update can fire a rule."""

    @tool
    def classify() -> ToolResult:
        """Classify the ticket."""
        return ToolResult(output="classified", update={"category": "tech"})

    agents = [Agent(name="triage", tools=[classify]), Agent(name="billing"), Agent(name="tech")]
    model = ScriptedModel(tool_call("classify"), text("tech answers"))
    swarm = Swarm(agents, "triage", model=model, graph=_triage_graph())

    result = await swarm.run("my wifi")

    assert [r.agent for r in model.requests] == ["triage", "tech"]
    assert result.handoffs[0].decided_by == "rule"


async def test_rules_see_loop_facts_under_the_reserved_key() -> None:
    """Conditions can read swarm.last_tool and swarm.last_tool_ok (seed 004's ON_FAILURE)."""

    @tool
    def charge() -> str:
        """Charge the card."""
        raise RuntimeError("card declined")

    graph = HandoffGraph()
    graph.add_edge(
        "billing", "human", when="swarm.last_tool == 'charge' and not swarm.last_tool_ok"
    )
    agents = [Agent(name="billing", tools=[charge]), Agent(name="human")]
    model = ScriptedModel(tool_call("charge"), text("a human will call you"))
    swarm = Swarm(agents, "billing", model=model, graph=graph)

    result = await swarm.run("pay")

    assert result.trail == ("billing", "human")
    assert result.handoffs[0].decided_by == "rule"


async def test_rule_handoffs_count_toward_max_handoffs() -> None:
    """After the cap, rules are not consulted and the agent must answer."""
    graph = HandoffGraph(on_cycle="allow")
    graph.add_edge("a", "b")
    graph.add_edge("b", "c")
    model = ScriptedModel(text("b answers"))
    swarm = Swarm([Agent(name=n) for n in "abc"], "a", model=model, graph=graph, max_handoffs=1)

    result = await swarm.run("x")

    assert result.trail == ("a", "b")
    assert result.stop_reason == "max_handoffs"


async def test_rule_closing_a_cycle_is_refused_and_the_model_decides() -> None:
    """A rule handoff back to an agent on the trail is refused like any other."""
    graph = HandoffGraph(on_cycle="allow")
    graph.add_edge("a", "b")
    graph.add_edge("b", "a")
    model = ScriptedModel(text("b answers"))
    swarm = Swarm([Agent(name="a"), Agent(name="b")], "a", model=model, graph=graph)

    result = await swarm.run("x")

    assert result.trail == ("a", "b")
    assert result.stop_reason == "cycle"
    assert [d.performed for d in result.rule_decisions] == [True, False]


def _llm_edged(*agents: Agent, model: ScriptedModel | None = None) -> Swarm:
    graph = HandoffGraph()
    graph.add_edge("triage", "tech", decided_by="llm")
    return Swarm(list(agents), "triage", model=model or ScriptedModel(), graph=graph)


async def test_an_llm_edge_in_the_graph_is_the_same_as_listing_the_handoff() -> None:
    """triage (handoffs=None) is offered only tech, as with handoffs=["tech"], and transfers."""
    model = ScriptedModel(transfer("tech"), text("Rebooted."))
    declared = _llm_edged(
        Agent(name="triage"), Agent(name="tech"), Agent(name="billing"), model=model
    )
    listed = Swarm(
        [Agent(name="triage", handoffs=["tech"]), Agent(name="tech"), Agent(name="billing")],
        "triage",
        model=ScriptedModel(),
    )

    result = await declared.run("router down")

    assert list(declared.plans["triage"].transfers) == list(listed.plans["triage"].transfers)
    assert list(declared.plans["triage"].transfers) == ["transfer_to_tech"]
    assert [t.name for t in model.requests[0].tools] == ["transfer_to_tech"]
    assert [(h.target, h.decided_by) for h in result.handoffs] == [("tech", "llm")]
    assert result.rule_decisions == ()


def test_an_llm_edge_an_agents_own_handoffs_do_not_list_is_a_configuration_error() -> None:
    """The graph and handoffs= may not contradict each other; listing the target agrees."""
    with pytest.raises(ConfigurationError, match="declares LLM edges from 'triage' to 'tech'"):
        _llm_edged(
            Agent(name="triage", handoffs=["billing"]), Agent(name="tech"), Agent(name="billing")
        )
    agreeing = _llm_edged(
        Agent(name="triage", handoffs=["billing", "tech"]),
        Agent(name="tech"),
        Agent(name="billing"),
    )
    assert sorted(agreeing.plans["triage"].transfers) == ["transfer_to_billing", "transfer_to_tech"]


def test_check_counts_llm_edges_when_it_looks_for_unreachable_agents() -> None:
    """With triage's only handoff declared in the graph, billing is reached by nothing."""
    swarm = _llm_edged(Agent(name="triage"), Agent(name="tech", handoffs=[]), Agent(name="billing"))

    findings = [(f.code, f.where) for f in swarm.check()]

    assert findings == [("unreachable_agent", "agent billing")]


def test_the_swarm_drawing_shows_the_graphs_llm_edges_as_handoffs() -> None:
    """draw_swarm draws triage -> tech (solid, the LLM's) and no edge to billing."""
    swarm = _llm_edged(Agent(name="triage"), Agent(name="tech", handoffs=[]), Agent(name="billing"))

    drawing = draw_swarm(swarm, "ascii")

    assert drawing.split("[[triage]]")[1] == "\n  --> tech\n"


async def test_with_graph_is_a_new_swarm_routing_by_the_new_rules() -> None:
    """with_graph swaps the rules for the new swarm only; None turns them off."""
    model = ScriptedModel(text("billing answers"), transfer("tech"), text("tech answers"))
    swarm = Swarm(_agents(), "triage", model=model)
    ruled = swarm.with_graph(_triage_graph())

    first = await ruled.run("refund", context={"category": "billing"})
    second = await ruled.with_graph(None).run("refund", context={"category": "billing"})

    assert [(h.target, h.decided_by) for h in first.handoffs] == [("billing", "rule")]
    assert [(h.target, h.decided_by) for h in second.handoffs] == [("tech", "llm")]
    assert (swarm.graph, ruled.graph) == (None, ruled.config.graph)
    assert ruled.fingerprint()["graph"] != swarm.fingerprint()["graph"]
    model.assert_exhausted()


def test_with_graph_refuses_a_graph_naming_an_agent_the_swarm_lacks() -> None:
    """A graph with an unknown agent raises ConfigurationError, as the constructor does."""
    graph = HandoffGraph()
    graph.add_edge("triage", "legal", when="category == 'legal'")
    with pytest.raises(ConfigurationError, match="legal"):
        Swarm(_agents(), "triage", model=ScriptedModel()).with_graph(graph)


def test_an_llm_edges_description_is_its_transfer_tools_description() -> None:
    """The model reads the description the graph gives the edge; an agent's own Handoff
    description wins over it."""
    graph = HandoffGraph()
    graph.add_edge("triage", "tech", decided_by="llm", description="Crashes, bugs, outages.")
    graph.add_edge("triage", "billing", decided_by="llm", description="Edge words.")
    agents = [
        Agent(name="triage", instructions="Route."),
        Agent(name="tech", instructions="Fix."),
        Agent(name="billing", instructions="Refund."),
    ]
    swarm = Swarm(agents, "triage", graph=graph, model=ScriptedModel())

    transfers = swarm.plans["triage"].transfers
    assert transfers["transfer_to_tech"].description == "Crashes, bugs, outages."
    assert transfers["transfer_to_billing"].description == "Edge words."

    own = Agent(
        name="triage",
        instructions="Route.",
        handoffs=["tech", Handoff(agent="billing", description="Money back.")],
    )
    mixed = Swarm([own, *agents[1:]], "triage", graph=graph, model=ScriptedModel())
    assert mixed.plans["triage"].transfers["transfer_to_billing"].description == "Money back."
    assert mixed.plans["triage"].transfers["transfer_to_tech"].description == (
        "Crashes, bugs, outages."
    )
