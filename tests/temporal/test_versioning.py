"""A worker whose swarm changed refuses old sessions with a clear error, not a replay failure."""

from __future__ import annotations

import pytest
from temporalio.client import WorkflowQueryFailedError

from swarmkit.temporal import SessionHandle, pending_decision, start_session
from swarmkit.testing import ScriptedModel
from tests.temporal.harness import new_queue, running_worker, wait_for
from tests.temporal.swarms import support_script, support_swarm


async def test_a_changed_swarm_refuses_an_old_session(temporal_address: str) -> None:
    """Billing's instructions changed: the new worker names the change; the session lives on
    (it fails workflow tasks, not the workflow) for a worker with the old code."""
    queue = new_queue()
    before = support_swarm(interrupt_before=["billing"])
    after = support_swarm(instructions="Refund orders politely.", interrupt_before=["billing"])
    model = ScriptedModel(*support_script(), name="scripted")
    async with running_worker(
        temporal_address, queue=queue, swarms={"support": before}, models={"scripted": model}
    ) as (client, _):
        handle = await start_session(client, "support", "refund A-1", task_queue=queue)
        await wait_for(handle, lambda: _is_paused(handle), "the pause")
    async with running_worker(
        temporal_address, queue=queue, swarms={"support": after}, models={"scripted": model}
    ) as (client, _):
        # The new worker replays the session to answer; the replay refuses, saying why.
        with pytest.raises(WorkflowQueryFailedError) as refused:
            await pending_decision(client.get_workflow_handle(handle.id))
        history = await client.get_workflow_handle(handle.id).fetch_history()

    message = str(refused.value)
    assert "was started with another configuration of swarm 'support'" in message
    assert "changed: instructions" in message
    assert not any(e.HasField("workflow_execution_failed_event_attributes") for e in history.events)


async def _is_paused(handle: SessionHandle) -> bool:
    return await pending_decision(handle) is not None
