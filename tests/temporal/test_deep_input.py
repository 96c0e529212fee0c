"""Issue 33 on Temporal: deep tool arguments are a tool error in the activity; the journal
mirror writes an encrypted journal."""

from __future__ import annotations

import asyncio
from pathlib import Path

from swarmkit import Agent, SQLiteJournal, Swarm
from swarmkit.journal import AESGCMCipher, InMemoryJournal
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


async def test_the_mirror_writes_an_encrypted_journal(
    temporal_address: str, tmp_path: Path
) -> None:
    """A Temporal session mirrored into an encrypted SQLite journal: the file holds no
    prompt, and with the key the session reads and replays."""
    cipher = AESGCMCipher({"k1": bytes(range(32))})
    model = ScriptedModel(text("sealed answer"), name="plain")
    swarm = Swarm([Agent(name="a")], "a", model=ScriptedModel(name="plain"))
    with SQLiteJournal(tmp_path / "j.db", cipher=cipher) as mirror:
        async with running_worker(
            temporal_address, swarms={"plain": swarm}, models={"plain": model}, journal=mirror
        ) as (client, queue):
            handle = await start_session(client, "plain", "PROMPT-TO-SEAL", task_queue=queue)
            async with asyncio.timeout(60):
                await session_result(handle)
        records = await mirror.read(handle.id)
        replayed = await swarm.replay(handle.id, mirror)

    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"PROMPT-TO-SEAL" not in raw and b"sealed answer" not in raw
    assert records[0].data["prompt"] == "PROMPT-TO-SEAL"
    assert replayed.final_output == "sealed answer"
