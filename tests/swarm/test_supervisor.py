"""Supervisors (seed 003): agents asked as tools, concurrently, inside the parent run."""

from __future__ import annotations

import asyncio

import pytest

from swarmkit import Agent, ConfigurationError, ModelError, Swarm
from swarmkit.journal import InMemoryJournal
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.testing import NeverCalledModel, ScriptedModel, text, turn
from swarmkit.testing import tool_call as call


class Broken:
    """A model whose server is down."""

    async def respond(self, request: ModelRequest) -> ModelResponse:
        raise ModelError("503 from the server", model="broken", attempts=3)


class Meeting:
    """Two models that each wait for the other: they finish only if called concurrently."""

    def __init__(self) -> None:
        self.arrived = {"flights": asyncio.Event(), "hotels": asyncio.Event()}

    def model(self, me: str, other: str, answer: str) -> ScriptedModel:
        meeting = self

        class Waiting(ScriptedModel):
            async def respond(self, request: ModelRequest) -> ModelResponse:
                meeting.arrived[me].set()
                await meeting.arrived[other].wait()
                return await super().respond(request)

        return Waiting(text(answer))


def _fan_out(**models: object) -> tuple[Swarm, ScriptedModel]:
    flights = Agent(name="flights", handoffs=[], model=models["flights"])  # type: ignore[arg-type]
    hotels = Agent(name="hotels", handoffs=[], model=models["hotels"])  # type: ignore[arg-type]
    planner_model = ScriptedModel(
        turn(call("ask_flights", input="LIS to OSL"), call("ask_hotels", input="Oslo, 2 nights")),
        text("Booked what could be booked."),
    )
    planner = Agent(
        name="planner",
        tools=[flights.as_tool(), hotels.as_tool()],
        handoffs=[],
        model=planner_model,
    )
    return Swarm([planner, flights, hotels], "planner", journal=InMemoryJournal()), planner_model


async def test_a_supervisor_asks_two_agents_at_once_and_gets_both_answers_in_call_order() -> None:
    """The delegations run concurrently; results return in the order the model called them."""
    meeting = Meeting()
    swarm, planner_model = _fan_out(
        flights=meeting.model("flights", "hotels", "TP1234 at 09:10"),
        hotels=meeting.model("hotels", "flights", "Hotel Bristol"),
    )
    result = await swarm.run("plan a trip", session_id="trip")

    assert result.final_output == "Booked what could be booked."
    assert result.trail == ("planner",)
    results = [m for m in planner_model.requests[1].messages if m.kind == "tool"]
    assert [(m.name, m.content) for m in results] == [
        ("ask_flights", "TP1234 at 09:10"),
        ("ask_hotels", "Hotel Bristol"),
    ]
    assert set(result.usage) == {"planner", "flights", "hotels"}


async def test_one_failing_branch_keeps_the_others_and_replays_with_no_model_call() -> None:
    """A failed sub-run is an error result; replay reproduces the run with zero calls."""
    swarm, planner_model = _fan_out(flights=Broken(), hotels=ScriptedModel(text("Hotel Bristol")))
    result = await swarm.run("plan a trip", session_id="trip")
    results = [m for m in planner_model.requests[1].messages if m.kind == "tool"]
    assert results[0].is_error and "503 from the server" in results[0].content
    assert (results[1].is_error, results[1].content) == (False, "Hotel Bristol")

    assert swarm.journal is not None
    sessions = {info.session_id for info in await swarm.journal.sessions()}
    assert sessions == {"trip", "trip__swarm_flights_0_call_1", "trip__swarm_hotels_0_call_2"}
    replayed = await Swarm(
        [
            Agent(
                name="planner",
                tools=[Agent(name="flights").as_tool(), Agent(name="hotels").as_tool()],
                handoffs=[],
            ),
            Agent(name="flights", handoffs=[]),
            Agent(name="hotels", handoffs=[]),
        ],
        "planner",
        model=NeverCalledModel(),
    ).replay("trip", swarm.journal)
    assert replayed == result


async def test_a_resumed_parent_finishes_a_sub_run_instead_of_starting_it_again() -> None:
    """A delegation whose sub-run was journaled is not run twice when the parent resumes."""
    journal = InMemoryJournal()
    helper = Agent(name="helper", handoffs=[], model=ScriptedModel(text("42")))
    boss_model = ScriptedModel(call("ask_helper", input="the answer?"))
    boss = Agent(name="boss", tools=[helper.as_tool()], handoffs=[], model=boss_model)
    with pytest.raises(Exception, match="script has no turn left"):
        await Swarm([boss, helper], "boss", journal=journal).run("go", session_id="s")

    helper_again = Agent(name="helper", handoffs=[], model=NeverCalledModel())
    boss_again = Agent(
        name="boss",
        tools=[helper_again.as_tool()],
        handoffs=[],
        model=ScriptedModel(text("It is 42.")),
    )
    resumed = await Swarm([boss_again, helper_again], "boss", journal=journal).resume("s")
    assert resumed.final_output == "It is 42."


def test_delegating_to_an_agent_outside_the_swarm_says_what_to_add() -> None:
    """The delegate must be a member of the swarm."""
    outsider = Agent(name="outsider")
    boss = Agent(name="boss", tools=[outsider.as_tool()], model=ScriptedModel())
    with pytest.raises(ConfigurationError, match="add that agent to the swarm"):
        Swarm([boss], "boss")


def test_an_agent_cannot_delegate_to_itself() -> None:
    """Self-delegation is refused at construction."""
    with pytest.raises(ConfigurationError, match="itself"):
        Agent(name="a", tools=[Agent(name="a").as_tool()])
