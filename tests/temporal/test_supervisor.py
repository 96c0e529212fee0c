"""Supervisors on Temporal: delegated sub-runs run in the workflow, their calls as activities."""

from __future__ import annotations

from swarmkit import Agent, Swarm
from swarmkit.journal import InMemoryJournal
from swarmkit.temporal import session_result, start_session
from swarmkit.testing import ScriptedModel, text, turn
from swarmkit.testing import tool_call as call
from tests.temporal.harness import activity_counts, running_worker


def _models() -> dict[str, ScriptedModel]:
    planner = ScriptedModel(
        turn(call("ask_flights", input="LIS to OSL"), call("ask_hotels", input="Oslo, 2 nights")),
        text("Booked."),
        name="planner-model",
    )
    flights = ScriptedModel(text("TP1234 at 09:10"), name="flights-model")
    hotels = ScriptedModel(text("Hotel Bristol"), name="hotels-model")
    return {m.name: m for m in (planner, flights, hotels)}


def _planner_swarm(models: dict[str, ScriptedModel]) -> Swarm:
    flights = Agent(name="flights", handoffs=[], model=models["flights-model"])
    hotels = Agent(name="hotels", handoffs=[], model=models["hotels-model"])
    planner = Agent(
        name="planner",
        tools=[flights.as_tool(), hotels.as_tool()],
        handoffs=[],
        model=models["planner-model"],
    )
    return Swarm([planner, flights, hotels], "planner")


async def test_a_supervisor_session_matches_the_in_process_run(temporal_address: str) -> None:
    """Two delegations fan out inside the workflow; the result and the mirrored sub-runs match."""
    local = await _planner_swarm(_models()).run(
        "plan a trip", session_id="trip", journal=InMemoryJournal()
    )
    models = _models()
    mirror = InMemoryJournal()
    async with running_worker(
        temporal_address,
        swarms={"planner": _planner_swarm(models)},
        models=dict(models),
        journal=mirror,
    ) as (client, queue):
        handle = await start_session(client, "planner", "plan a trip", task_queue=queue)
        result = await session_result(handle)
        counts = activity_counts(await handle.fetch_history())

    assert result.final_output == local.final_output == "Booked."
    assert dict(result.usage) == dict(local.usage)
    assert counts["swarmkit.model"] == {"scheduled": 4, "completed": 4}
    sessions = {info.session_id for info in await mirror.sessions()}
    assert sessions == {
        handle.id,
        f"{handle.id}__swarm_flights_0_call_1",
        f"{handle.id}__swarm_hotels_0_call_2",
    }
