"""A worker SIGKILLed between an effect and its result: the ledger is paid exactly once."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import Client

from swarmkit import edit
from swarmkit.temporal import (
    SessionHandle,
    SwarmPlugin,
    decide,
    pending_decision,
    session_result,
    start_session,
)
from tests.temporal.harness import gate_server, kill, new_queue, wait_for, worker_process

pytestmark = [pytest.mark.kill, pytest.mark.slow]


async def test_a_lost_effect_with_reconcile_is_not_paid_again(
    temporal_address: str, tmp_path: Path
) -> None:
    """The retried activity asks the ledger instead of paying: one payment."""
    queue = new_queue()
    client = await Client.connect(temporal_address, plugins=[SwarmPlugin()])
    async with gate_server() as (gates, env):
        with worker_process(temporal_address, queue, tmp_path, env) as pid:
            handle = await start_session(client, "cashier", "pay A-1", task_queue=queue)
            await gates.arrival("tool")
            kill(pid)
        gates.open("tool")
        with worker_process(temporal_address, queue, tmp_path, env):
            result = await session_result(handle)
    assert result.final_output == "done: paid A-1"
    assert len((tmp_path / "ledger.txt").read_text().split()) == 1


async def test_a_lost_effect_without_reconcile_waits_for_a_person(
    temporal_address: str, tmp_path: Path
) -> None:
    """The retried activity does not pay: the session waits with "outcome unknown"."""
    queue = new_queue()
    client = await Client.connect(temporal_address, plugins=[SwarmPlugin()])
    async with gate_server() as (gates, env):
        with worker_process(temporal_address, queue, tmp_path, env) as pid:
            handle = await start_session(client, "teller", "pay A-1", task_queue=queue)
            await gates.arrival("tool")
            kill(pid)
        gates.open("tool")
        with worker_process(temporal_address, queue, tmp_path, env):
            await wait_for(handle, lambda: _waiting(handle), "the outcome-unknown pause")
            pending = await pending_decision(handle)
            assert pending is not None and pending.kind == "effect"
            assert (pending.payload or {})["outcome"] == "unknown"
            await decide(handle, edit(payload={"result": "paid A-1 (ledger)"}))
            result = await session_result(handle)
    assert result.final_output == "done: paid A-1 (ledger)"
    assert len((tmp_path / "ledger.txt").read_text().split()) == 1


async def _waiting(handle: SessionHandle) -> bool:
    return await pending_decision(handle) is not None
