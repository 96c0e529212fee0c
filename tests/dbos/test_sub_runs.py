"""Supervisors on DBOS: delegated sub-runs (``agent.as_tool()``) run inside the session's
workflow, each of their model and tool calls a recorded step of it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from dbos import DBOS

from swarmkit import Agent, Swarm, tool
from swarmkit.dbos import DurableSwarms
from swarmkit.journal import InMemoryJournal, SQLiteJournal
from swarmkit.testing import ScriptedModel, text, turn
from swarmkit.testing import tool_call as call

LOOKUPS: list[str] = []


@tool
def lookup(city: str) -> str:
    """Find a flight to a city."""
    LOOKUPS.append(city)
    return f"TP1234 to {city}"


def planner_swarm(models: dict[str, ScriptedModel]) -> Swarm:
    """A planner that asks flights (which uses a tool) and hotels at once."""
    flights = Agent(name="flights", tools=[lookup], handoffs=[], model=models["flights"])
    hotels = Agent(name="hotels", handoffs=[], model=models["hotels"])
    planner = Agent(
        name="planner",
        tools=[flights.as_tool(), hotels.as_tool()],
        handoffs=[],
        model=models["planner"],
    )
    return Swarm([planner, flights, hotels], "planner")


def scripts() -> dict[str, ScriptedModel]:
    """The three agents' scripted models (a fresh set per run)."""
    return {
        "planner": ScriptedModel(
            turn(call("ask_flights", input="LIS to OSL"), call("ask_hotels", input="Oslo")),
            text("Booked."),
        ),
        "flights": ScriptedModel(call("lookup", city="Oslo"), text("TP1234")),
        "hotels": ScriptedModel(text("Hotel Bristol")),
    }


async def test_a_supervisor_session_matches_the_in_process_run(
    sqlite_url: str, tmp_path: Path
) -> None:
    """The result, the usage and the sub-runs' journals match an in-process run; each model
    and tool call of the sub-runs is one step of the session, run once."""
    local = await planner_swarm(scripts()).run("plan a trip", journal=InMemoryJournal())
    LOOKUPS.clear()
    models = scripts()
    mirror = SQLiteJournal(tmp_path / "journal.sqlite")
    app = DurableSwarms(
        {"planner": planner_swarm(models)},
        database_url=sqlite_url,
        journal=mirror,
        polling_interval=0.05,
    )
    async with app:
        handle = await app.start_session("planner", "plan a trip", session_id="trip")
        result = await asyncio.wait_for(handle.result(), 60)
        steps = [s["function_name"] for s in await DBOS.list_workflow_steps_async("trip")]
    assert result.final_output == local.final_output == "Booked."
    assert dict(result.usage) == dict(local.usage)
    assert steps.count("swarmkit.model") == 5  # planner twice, flights twice, hotels once
    assert steps.count("swarmkit.tool") == 1 and LOOKUPS == ["Oslo"]
    assert [len(m.requests) for m in models.values()] == [2, 2, 1]
    sessions = {info.session_id for info in await mirror.sessions()}
    assert sessions == {"trip", "trip__swarm_flights_0_call_1", "trip__swarm_hotels_0_call_2"}
    replayed = await planner_swarm({k: ScriptedModel() for k in models}).replay("trip", mirror)
    assert replayed.final_output == "Booked."
