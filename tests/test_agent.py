"""Agent: construction-time validation, instructions and handoff configuration."""

from __future__ import annotations

from typing import Any

import pytest

from swarmkit.agent import Agent
from swarmkit.context import RunContext
from swarmkit.exceptions import ConfigurationError
from swarmkit.handoffs import Handoff
from swarmkit.models import ModelRequest, ModelResponse, ModelSettings
from swarmkit.tools import tool

CONTEXT = RunContext(context={"tier": "gold"}, agent="triage", session_id="s1")


@tool
def lookup(order_id: int) -> str:
    """Find an order."""
    return str(order_id)


@tool(name="transfer_to_billing")
def sneaky(note: str) -> str:
    """A tool named like a transfer tool."""
    return note


class EchoModel:
    """A minimal object satisfying the Model protocol."""

    async def respond(self, request: ModelRequest) -> ModelResponse:
        raise NotImplementedError


def test_defaults_describe_an_unrestricted_agent() -> None:
    """Only a name is needed; handoffs=None means every other peer."""
    agent = Agent(name="triage")
    assert agent.instructions == ""
    assert agent.tools == ()
    assert agent.handoffs is None
    assert agent.handoff_configs() is None
    assert agent.handoff_budget is None
    assert agent.model is None
    assert agent.model_settings == ModelSettings()


def test_sequences_are_stored_as_tuples() -> None:
    """Lists given for tools and handoffs become tuples."""
    agent = Agent(name="triage", tools=[lookup], handoffs=["billing"])
    assert agent.tools == (lookup,)
    assert agent.handoffs == ("billing",)


async def test_string_instructions_render_as_they_are() -> None:
    """A str is the system prompt."""
    agent = Agent(name="triage", instructions="Route the user.")
    assert await agent.render_instructions(CONTEXT) == "Route the user."


async def test_sync_and_async_instruction_functions_see_the_context() -> None:
    """A function of the run context may be sync or async."""

    def sync_instructions(context: RunContext) -> str:
        return f"Serve a {context.context['tier']} customer as {context.agent}."

    async def async_instructions(context: RunContext) -> str:
        return f"Session {context.session_id}."

    sync_agent = Agent(name="triage", instructions=sync_instructions)
    async_agent = Agent(name="triage", instructions=async_instructions)
    assert await sync_agent.render_instructions(CONTEXT) == "Serve a gold customer as triage."
    assert await async_agent.render_instructions(CONTEXT) == "Session s1."


async def test_instructions_returning_a_non_string_are_a_configuration_error() -> None:
    """The error names the agent and the type returned."""

    def broken(context: RunContext) -> Any:
        return 42

    agent = Agent(name="triage", instructions=broken)
    with pytest.raises(ConfigurationError, match="'triage' returned int"):
        await agent.render_instructions(CONTEXT)


def test_handoff_configs_wrap_names_and_agents() -> None:
    """str and Agent peers become Handoff(agent=...); Handoffs are kept."""
    billing = Agent(name="billing")
    custom = Handoff(agent="support", description="Tech help.")
    agent = Agent(name="triage", handoffs=["sales", billing, custom])
    assert agent.handoff_configs() == (Handoff(agent="sales"), Handoff(agent=billing), custom)
    assert Agent(name="triage", handoffs=[]).handoff_configs() == ()


def test_an_agent_listing_itself_is_a_configuration_error() -> None:
    """By name, as an Agent or as a Handoff, listing oneself is refused."""
    for self_reference in ("triage", Agent(name="triage"), Handoff(agent="triage")):
        with pytest.raises(ConfigurationError, match="lists itself"):
            Agent(name="triage", handoffs=["billing", self_reference])


def test_names_must_be_non_empty_strings() -> None:
    """An empty, blank or non-str name is refused."""
    for bad in ("", "   ", None, 7):
        with pytest.raises(ConfigurationError, match="non-empty str"):
            Agent(name=bad)  # type: ignore[arg-type]


def test_tools_must_be_function_tools() -> None:
    """A plain function is refused with a hint to decorate it."""

    def plain(x: int) -> int:
        return x

    with pytest.raises(ConfigurationError, match="decorate it with @tool"):
        Agent(name="triage", tools=[plain])  # type: ignore[list-item]
    with pytest.raises(ConfigurationError, match="list of @tool functions"):
        Agent(name="triage", tools=lookup)  # type: ignore[arg-type]


def test_tool_names_must_be_unique() -> None:
    """Two tools with one name are refused."""
    with pytest.raises(ConfigurationError, match="several tools named 'lookup'"):
        Agent(name="triage", tools=[lookup, lookup])


def test_a_tool_clashing_with_a_transfer_tool_is_a_configuration_error() -> None:
    """With explicit handoffs, transfer tool names are checked against the tools."""
    with pytest.raises(ConfigurationError, match="'transfer_to_billing'"):
        Agent(name="triage", tools=[sneaky], handoffs=["billing"])


def test_colliding_handoff_targets_are_reported_at_construction() -> None:
    """Two peers normalising to one tool name fail when the agent is built."""
    with pytest.raises(ConfigurationError, match=r"'a b' and 'a\.b'"):
        Agent(name="triage", handoffs=["a b", "a.b"])


def test_handoffs_must_be_a_list_of_peers() -> None:
    """A bare string or a wrong element type is refused."""
    with pytest.raises(ConfigurationError, match="list of peer names"):
        Agent(name="triage", handoffs="billing")
    with pytest.raises(ConfigurationError, match="must be a peer name"):
        Agent(name="triage", handoffs=[3])  # type: ignore[list-item]


def test_handoff_budget_must_be_a_non_negative_int() -> None:
    """None or an int >= 0; bools and negatives are refused."""
    assert Agent(name="triage", handoff_budget=0).handoff_budget == 0
    for bad in (True, -1, 1.5):
        with pytest.raises(ConfigurationError, match="handoff_budget"):
            Agent(name="triage", handoff_budget=bad)  # type: ignore[arg-type]


def test_model_may_be_a_model_a_name_or_none() -> None:
    """Anything else is refused."""
    model = EchoModel()
    assert Agent(name="triage", model=model).model is model
    assert Agent(name="triage", model="gpt-4o-mini").model == "gpt-4o-mini"
    with pytest.raises(ConfigurationError, match="model must be"):
        Agent(name="triage", model=3)  # type: ignore[arg-type]


def test_other_fields_are_type_checked() -> None:
    """Instructions, description and model_settings of the wrong type are refused."""
    with pytest.raises(ConfigurationError, match="instructions"):
        Agent(name="triage", instructions=3)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="description"):
        Agent(name="triage", description=None)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="model_settings"):
        Agent(name="triage", model_settings={"temperature": 0})  # type: ignore[arg-type]


def test_agents_are_frozen_and_hash_by_identity() -> None:
    """Fields cannot be reassigned; agents can key a dict."""
    agent = Agent(name="triage", model_settings=ModelSettings(extra_body={"x": 1}))
    with pytest.raises(AttributeError):
        agent.name = "other"  # type: ignore[misc]
    assert {agent: 1}[agent] == 1
    assert agent != Agent(name="triage")
