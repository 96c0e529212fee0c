"""A DBOS worker process for the kill tests.

``python -m tests.dbos.worker_app DATABASE_URL EXECUTOR_ID JOURNAL [VERSION]``
serves the ``clerk`` and ``desk`` swarms until it is killed (or stopped by SIGTERM).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from swarmkit import Agent, Swarm
from swarmkit.dbos import DurableSwarms, QueueLimits
from swarmkit.journal import SQLiteJournal
from tests.temporal.swarms import GatedModel, slow_lookup

CHANGED = "SWARMKIT_TEST_CHANGED"
"""Set to 1 to serve the clerk with other instructions (another swarm fingerprint)."""


def swarms() -> dict[str, Swarm]:
    """The clerk looks an order up at a gate; the desk pauses for approval of its answer."""
    instructions = "Look orders up, carefully." if os.environ.get(CHANGED) else "Look orders up."
    clerk = Agent(name="clerk", instructions=instructions, tools=[slow_lookup])
    return {
        "clerk": Swarm([clerk], "clerk", model=GatedModel()),
        "desk": Swarm([clerk], "clerk", model=GatedModel(), interrupt_after=["clerk"]),
    }


async def main(database_url: str, executor_id: str, journal: str, version: str | None) -> None:
    """Serve until SIGTERM (a clean stop) or SIGKILL (the test's crash)."""
    app = DurableSwarms(
        swarms(),
        database_url=database_url,
        journal=SQLiteJournal(journal),
        executor_id=executor_id,
        application_version=version,
        limits=QueueLimits(per_worker=4),
        polling_interval=0.05,
    )
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with app:
        await stop.wait()


if __name__ == "__main__":
    arguments = [*sys.argv[1:], ""]
    asyncio.run(main(arguments[0], arguments[1], arguments[2], arguments[3] or None))


clerk = swarms()["clerk"]
"""The clerk as a ``module:attribute`` target (``tests.dbos.worker_app:clerk``)."""
