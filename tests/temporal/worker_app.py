"""A worker process for the kill tests: ``python -m tests.temporal.worker_app ADDRESS QUEUE``."""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta

from temporalio.client import Client
from temporalio.common import RetryPolicy
from temporalio.worker import Worker

from swarmkit.temporal import ActivityOptions, SwarmPlugin
from tests.dbos.worker_app import CourierModel
from tests.temporal.swarms import GatedModel, PayingModel

QUICK = ActivityOptions(
    start_to_close_timeout=timedelta(seconds=2),
    retry_policy=RetryPolicy(initial_interval=timedelta(milliseconds=100)),
)
"""Short attempts, so a killed worker's call is retried soon."""


async def main(address: str, queue: str) -> None:
    """Serve the clerk swarm (the kill tests; "metered" has a spend ledger) and the courier
    (the chaos run) until killed."""
    plugin = SwarmPlugin(
        swarms={
            "clerk": "tests.temporal.swarms:clerk",
            "metered": "tests.temporal.swarms:metered",
            "cashier": "tests.temporal.swarms:cashier",
            "teller": "tests.temporal.swarms:teller",
            "courier": "tests.dbos.worker_app:courier",
        },
        models={"gated": GatedModel(), "paying": PayingModel(), "courier": CourierModel()},
        model_options=QUICK,
        tool_options=QUICK,
    )
    client = await Client.connect(address, plugins=[plugin])
    worker = Worker(
        client,
        task_queue=queue,
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=1),
    )
    await worker.run()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
