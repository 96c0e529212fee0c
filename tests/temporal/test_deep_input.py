"""Deep tool arguments on Temporal: the tool activity answers with a tool error, no crash."""

from __future__ import annotations

import asyncio

from swarmkit import Agent, Swarm
from swarmkit.journal import InMemoryJournal
from swarmkit.messages import ToolMessage
from swarmkit.temporal import session_result, start_session
from swarmkit.testing import ScriptedModel, raw_tool_call, text, turn
from tests.temporal.harness import running_worker
from tests.temporal.swarms import lookup_order

DEEP = '{"order_id": ' + "[" * 100_000 + "]" * 100_000 + "}"


async def test_deep_arguments_become_a_tool_error_in_the_activity(temporal_address: str) -> None:
    """A durable tool called with arguments 100,000 deep answers the model with an error."""
    model = ScriptedModel(turn(raw_tool_call("lookup_order", DEEP)), text("sorry"), name="deep")
    swarm = Swarm([Agent(name="a", tools=[lookup_order])], "a", model=ScriptedModel(name="deep"))
    journal = InMemoryJournal()
    async with running_worker(
        temporal_address, swarms={"deep": swarm}, models={"deep": model}, journal=journal
    ) as (client, queue):
        handle = await start_session(client, "deep", "hi", task_queue=queue)
        async with asyncio.timeout(60):  # before the fix the activity failed and retried forever
            result = await session_result(handle)

    assert result.final_output == "sorry"
    (answer,) = [m.content for m in model.requests[1].messages if isinstance(m, ToolMessage)]
    assert "more than the 64 allowed" in answer
    assert (await journal.read(handle.id))[-1].kind == "run_finished"
