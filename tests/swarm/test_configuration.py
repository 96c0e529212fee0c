"""Every configuration mistake is a ConfigurationError at construction, before any model call."""

from __future__ import annotations

from typing import Any

import pytest

from swarmkit import Agent, ConfigurationError, Handoff, HandoffGraph, Swarm, tool
from swarmkit.testing import ScriptedModel, text


def _model() -> ScriptedModel:
    return ScriptedModel()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_handoffs": -1}, "max_handoffs"),
        ({"max_turns": 0}, "max_turns"),
        ({"max_revisits": -2}, "max_revisits"),
        ({"on_cycle": "explode"}, "on_cycle"),
        ({"on_max_handoffs": "ignore"}, "on_max_handoffs"),
    ],
)
def test_bad_limits_and_policies_are_rejected(kwargs: dict[str, Any], message: str) -> None:
    """Negative limits and unknown policies name the setting to fix."""
    with pytest.raises(ConfigurationError, match=message):
        Swarm([Agent(name="a")], "a", model=_model(), **kwargs)


def test_unknown_entry_agent_is_rejected() -> None:
    """The entry agent must be one of the agents."""
    with pytest.raises(ConfigurationError, match="entry_agent 'x'"):
        Swarm([Agent(name="a")], "x", model=_model())


def test_handoff_to_unknown_peer_name_says_what_to_add() -> None:
    """A peer named by a string the swarm lacks: the error names the Agent to add."""
    with pytest.raises(ConfigurationError, match="add the Agent named 'ghost' to the swarm"):
        Swarm([Agent(name="a", handoffs=["ghost"])], "a", model=_model())


def test_an_agent_listed_only_in_handoffs_joins_the_swarm() -> None:
    """Swarm([triage], triage) with triage handing off to billing (and billing to refunds)."""
    refunds = Agent(name="refunds")
    billing = Agent(name="billing", handoffs=[refunds])
    triage = Agent(name="triage", handoffs=[billing])

    swarm = Swarm([triage], triage, model=_model())

    assert sorted(swarm.agents) == ["billing", "refunds", "triage"]
    assert swarm.entry_agent == "triage"


def test_duplicate_agent_names_are_rejected() -> None:
    """Two agents with one name would make handoffs ambiguous."""
    with pytest.raises(ConfigurationError, match="named 'a'"):
        Swarm([Agent(name="a"), Agent(name="a")], "a", model=_model())


def test_graph_naming_unknown_agents_is_rejected() -> None:
    """Every node of the HandoffGraph must be an agent."""
    graph = HandoffGraph()
    graph.add_edge("a", "nobody")
    with pytest.raises(ConfigurationError, match="nobody"):
        Swarm([Agent(name="a")], "a", model=_model(), graph=graph)


def test_agent_listing_itself_is_rejected() -> None:
    """An agent cannot hand off to itself."""
    with pytest.raises(ConfigurationError):
        Agent(name="a", handoffs=["a"])


def test_missing_model_is_rejected() -> None:
    """Without a swarm or agent model, construction says where to put one."""
    with pytest.raises(ConfigurationError, match="model="):
        Swarm([Agent(name="a")], "a")


async def test_reserved_context_key_is_rejected() -> None:
    """The 'swarm' key is the loop's; a caller's context cannot shadow it."""
    swarm = Swarm([Agent(name="a")], "a", model=ScriptedModel(text("x")))
    with pytest.raises(ConfigurationError, match="reserved"):
        await swarm.run("x", context={"swarm": 1})


def test_seed_002_dict_of_agents_and_handoffs_is_accepted() -> None:
    """{name: Agent | Handoff} names peers by key, as in seed 002."""
    billing = Agent(name="billing_v2", description="Billing questions")
    swarm = Swarm(
        {"triage": Agent(name="triage"), "billing": Handoff(agent=billing)},
        "triage",
        model=_model(),
    )
    assert sorted(swarm.agents) == ["billing", "triage"]


def test_function_tool_clashing_with_a_transfer_tool_is_rejected() -> None:
    """A tool named like a generated transfer tool would be ambiguous."""

    @tool
    def transfer_to_b() -> str:
        """Clash."""
        return ""

    with pytest.raises(ConfigurationError, match="transfer_to_b"):
        Swarm([Agent(name="a", tools=[transfer_to_b]), Agent(name="b")], "a", model=_model())
