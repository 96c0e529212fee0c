"""context_type: the run context validated against a Pydantic model, typed for tools."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from swarmkit import Agent, ConfigurationError, HandoffGraph, RunContext, Swarm, tool
from swarmkit.journal import InMemoryJournal
from swarmkit.testing import NeverCalledModel, ScriptedModel, text, tool_call


class Customer(BaseModel):
    """What a support run knows about its customer."""

    tier: str
    orders: int = 0


def _swarm(model: ScriptedModel | NeverCalledModel, **options: object) -> Swarm:
    return Swarm([Agent(name="a")], "a", model=model, context_type=Customer, **options)  # type: ignore[arg-type]


async def test_a_context_that_does_not_fit_is_refused_before_anything_is_journaled() -> None:
    """The error names the field; the journal holds nothing."""
    journal = InMemoryJournal()
    with pytest.raises(ConfigurationError, match="orders") as caught:
        await _swarm(NeverCalledModel(), journal=journal).run(
            "x", context={"tier": "gold", "orders": "many"}, session_id="s1"
        )
    assert "Customer" in str(caught.value)
    assert await journal.next_seq("s1") == 0


async def test_rules_see_the_validated_json_form_with_defaults() -> None:
    """A default of the context type is seen by rules and journaled."""
    graph = HandoffGraph()
    graph.add_edge("a", "b", when="orders == 0")
    model = ScriptedModel(text("b here"))
    swarm = Swarm(
        [Agent(name="a"), Agent(name="b")], "a", model=model, graph=graph, context_type=Customer
    )

    result = await swarm.run("x", context={"tier": "gold"})

    assert result.trail == ("a", "b")
    assert result.context == {"tier": "gold", "orders": 0}


async def test_tools_read_the_context_typed() -> None:
    """RunContext.context_as gives the context as the model class, with tool updates."""
    seen: list[Customer] = []

    @tool
    def inspect_customer(ctx: RunContext) -> str:
        """Look at the customer."""
        seen.append(ctx.context_as(Customer))
        return "ok"

    model = ScriptedModel(tool_call("inspect_customer"), text("done"))
    agent = Agent(name="a", tools=[inspect_customer])
    swarm = Swarm([agent], "a", model=model, context_type=Customer)

    await swarm.run("x", context={"tier": "gold", "orders": 3})

    assert seen == [Customer(tier="gold", orders=3)]


async def test_without_a_context_type_nothing_changes() -> None:
    """Any JSON context is taken as it is."""
    model = ScriptedModel(text("hi"))
    swarm = Swarm([Agent(name="a")], "a", model=model)

    result = await swarm.run("x", context={"anything": [1, 2]})

    assert result.context == {"anything": [1, 2]}


def test_context_type_must_be_a_pydantic_model() -> None:
    """A dict type is a configuration error."""
    with pytest.raises(ConfigurationError, match="context_type"):
        Swarm([Agent(name="a")], "a", model=NeverCalledModel(), context_type=dict)  # type: ignore[arg-type]


async def test_a_typed_session_replays_from_its_journaled_context() -> None:
    """The journal holds the validated context; replay starts from it unchanged."""
    journal = InMemoryJournal()
    recorded = await _swarm(ScriptedModel(text("hi")), journal=journal).run(
        "x", context={"tier": "gold"}
    )

    replayed = await _swarm(NeverCalledModel()).replay(recorded.session_id, journal)

    assert replayed.context == recorded.context == {"tier": "gold", "orders": 0}
