"""Human decisions on Temporal: the paused run waits in the workflow for an update."""

from __future__ import annotations

import pytest
from temporalio.client import WorkflowUpdateFailedError

from swarmkit import approve, edit
from swarmkit.journal import InMemoryJournal
from swarmkit.temporal import decide, pending_decision, session_result, start_session
from swarmkit.temporal._client import SessionHandle
from swarmkit.testing import ScriptedModel
from tests.temporal.harness import running_worker, wait_for
from tests.temporal.swarms import support_script, support_swarm


async def _paused(handle: SessionHandle) -> bool:
    return await pending_decision(handle) is not None


async def test_a_paused_session_continues_after_an_approving_update(
    temporal_address: str,
) -> None:
    """The handoff to billing waits; an invalid edit is refused, then an approval goes on."""
    model = ScriptedModel(*support_script(), name="scripted")
    swarm = support_swarm(interrupt_before=["billing"])
    journal = InMemoryJournal()
    async with running_worker(
        temporal_address, swarms={"support": swarm}, models={"scripted": model}, journal=journal
    ) as (client, queue):
        handle = await start_session(client, "support", "refund A-1", task_queue=queue)
        await wait_for(handle, lambda: _paused(handle), "the pause")
        pending = await pending_decision(handle)
        mirrored_at_pause = len(await journal.read(handle.id))
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await decide(handle, edit(payload={"order_id": "A-1", "amount": "lots"}))
        still = await pending_decision(handle)
        await decide(handle, approve())
        result = await session_result(handle)

    assert pending is not None and pending.kind == "handoff" and pending.target == "billing"
    assert "amount" in str(refused.value.cause)
    assert still == pending
    assert result.stop_reason == "final_output"
    assert result.trail == ("triage", "billing")
    model.assert_exhausted()
    records = await journal.read(handle.id)
    assert 0 < mirrored_at_pause < len(records)
    assert records[-1].kind == "run_finished"


async def test_an_edit_changes_the_handoff_payload(temporal_address: str) -> None:
    """A valid edit replaces the payload the receiving agent gets."""
    swarm = support_swarm(interrupt_before=["billing"])
    model = ScriptedModel(*support_script(), name="scripted")
    async with running_worker(
        temporal_address, swarms={"support": swarm}, models={"scripted": model}
    ) as (client, queue):
        handle = await start_session(client, "support", "refund A-1", task_queue=queue)
        await wait_for(handle, lambda: _paused(handle), "the pause")
        await decide(handle, edit(payload={"order_id": "A-1", "amount": 10.0}))
        result = await session_result(handle)

    assert result.handoffs[0].payload == {"order_id": "A-1", "amount": 10.0}
