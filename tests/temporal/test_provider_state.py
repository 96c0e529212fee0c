"""Provider reasoning state through a Temporal workflow: signed thinking (Anthropic), thought
signatures (Gemini) and reasoning items (Responses) cross the activity boundary and the
workflow's history intact, and the history replays without nondeterminism.

The loopback server refuses any follow-up whose history lost the state it issued, as the
services do, so a dropped field fails the session here."""

from __future__ import annotations

import pytest
from temporalio.worker import Replayer

from swarmkit import Agent, Handoff, InMemoryJournal, Swarm, tool
from swarmkit.temporal import SwarmPlugin, session_result, start_session
from swarmkit.testing import NeverCalledModel
from tests.models.state_server import call, say, state_server
from tests.models.test_provider_state import anthropic, gemini, responses
from tests.temporal.harness import activity_counts, running_worker

PROVIDERS = {"anthropic": anthropic, "gemini": gemini, "responses": responses}


@tool
def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: shipped"


def desk_swarm(model: object) -> Swarm:
    """Front looks an order up and hands off to desk, which looks another up and answers."""
    desk = Agent(name="desk", instructions="Answer.", tools=[lookup])
    front = Agent(
        name="front",
        instructions="Look orders up, then pass on.",
        tools=[lookup],
        handoffs=[Handoff(agent=desk)],
    )
    return Swarm([front, desk], "front", model=model)  # type: ignore[arg-type]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_reasoning_state_survives_a_temporal_session_and_its_replay(
    provider: str, temporal_address: str
) -> None:
    """Four model activities, a handoff and two tools: no follow-up is refused, the result is
    the in-process one, and the history replays with no model called (the
    swarm's code as the worker had it, its model never called)."""
    turns = (call("lookup", order="A1"), call("transfer_to_desk"), call("lookup", order="B2"))
    async with state_server(*turns, say("desk done")) as server:
        model = PROVIDERS[provider](server)
        name = str(getattr(model, "name", ""))
        async with running_worker(
            temporal_address, swarms={"desk": desk_swarm(model)}, models={name: model}
        ) as (client, queue):
            handle = await start_session(client, "desk", "Where?", task_queue=queue)
            result = await session_result(handle)
            history = await handle.fetch_history()
        assert server.refusals == []
        server.add(*turns, say("desk done"))
        local = await desk_swarm(model).run("Where?", journal=InMemoryJournal())
    assert (result.trail, result.final_output) == (("front", "desk"), "desk done")
    assert (local.trail, local.final_output) == (result.trail, result.final_output)
    assert activity_counts(history)["swarmkit.model"] == {"scheduled": 4, "completed": 4}
    plugin = SwarmPlugin(swarms={"desk": desk_swarm(model)}, models={name: NeverCalledModel()})
    replay = await Replayer(workflows=[], plugins=[plugin]).replay_workflow(
        history, raise_on_replay_failure=False
    )
    assert replay.replay_failure is None
