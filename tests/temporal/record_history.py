"""Record the Replayer fixture: ``python -m tests.temporal.record_history`` (re-run it when a
loop change is meant to change what a session does, and say so in the changelog)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from swarmkit.temporal import dev_server, session_result, start_session
from swarmkit.testing import ScriptedModel
from tests.temporal.harness import running_worker
from tests.temporal.swarms import support_script, support_swarm

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "temporal_support_history.json"


async def record(address: str) -> None:
    """Run the support session on a dev server and write its history as JSON."""
    model = ScriptedModel(*support_script(), name="scripted")
    async with running_worker(
        address, swarms={"support": support_swarm()}, models={"scripted": model}
    ) as (client, queue):
        handle = await start_session(
            client, "support", "refund A-1", task_queue=queue, session_id="support-fixture"
        )
        await session_result(handle)
        history = await handle.fetch_history()
    FIXTURE.write_text(history.to_json(), encoding="utf-8")


if __name__ == "__main__":
    with dev_server() as server:
        asyncio.run(record(server))
