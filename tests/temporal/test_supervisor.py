"""Supervisors on Temporal: delegated sub-runs run in the workflow, their calls as activities."""

from __future__ import annotations

from swarmkit import Agent, Swarm
from swarmkit.events import Event, SubRunEvent, TextDelta
from swarmkit.journal import InMemoryJournal
from swarmkit.temporal import session_events, session_result, start_session
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


async def test_a_supervisor_sessions_events_carry_its_sub_runs_as_in_process(
    temporal_address: str,
) -> None:
    """The events query streams the delegates' events wrapped, in call order, as a local run."""
    local = [
        _kind(e)
        async for e in _planner_swarm(_models()).stream(
            "plan a trip", session_id="trip", journal=InMemoryJournal()
        )
        if not isinstance(e, TextDelta) and not _is_delta(e)
    ]
    models = _models()
    async with running_worker(
        temporal_address, swarms={"planner": _planner_swarm(models)}, models=dict(models)
    ) as (client, queue):
        handle = await start_session(client, "planner", "plan a trip", task_queue=queue)
        await session_result(handle)
        events = await session_events(handle)

    assert [_kind(e) for e in events] == local
    assert any(isinstance(e, SubRunEvent) for e in events)


def _kind(event: Event) -> str:
    if isinstance(event, SubRunEvent):
        return f"{event.tool_call_id}:{_kind(event.event)}"
    return event.kind


def _is_delta(event: Event) -> bool:
    return isinstance(event, SubRunEvent) and (
        isinstance(event.event, TextDelta) or _is_delta(event.event)
    )
