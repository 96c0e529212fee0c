"""A DBOS worker process for the kill tests.

``python -m tests.dbos.worker_app DATABASE_URL EXECUTOR_ID JOURNAL [VERSION]`` (JOURNAL: an
SQLite path or a Postgres URL)
serves the ``clerk``, ``desk``, ``courier`` and ``metered`` (the clerk with a spend ledger)
swarms until it is killed (or stopped by SIGTERM).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from swarmkit import Agent, Budget, Ledger, Swarm, tool
from swarmkit.context import RunContext
from swarmkit.dbos import DurableSwarms, QueueLimits
from swarmkit.journal import open_journal
from swarmkit.messages import AssistantMessage, ToolCall, ToolMessage
from swarmkit.models import ModelRequest, ModelResponse
from tests.temporal.swarms import STATE_DIR, GatedModel, cashier, slow_lookup, teller

CHANGED = "SWARMKIT_TEST_CHANGED"
"""Set to 1 to serve the clerk with other instructions (another swarm fingerprint)."""


def swarms() -> dict[str, Swarm]:
    """The clerk looks an order up at a gate; the desk pauses for approval of its answer;
    the courier takes a few quick tool rounds (the chaos run)."""
    instructions = "Look orders up, carefully." if os.environ.get(CHANGED) else "Look orders up."
    clerk = Agent(name="clerk", instructions=instructions, tools=[slow_lookup])
    courier = Agent(name="courier", instructions="Track parcels.", tools=[track])
    return {
        "clerk": Swarm([clerk], "clerk", model=GatedModel()),
        "desk": Swarm([clerk], "clerk", model=GatedModel(), interrupt_after=["clerk"]),
        "courier": Swarm([courier], "courier", model=CourierModel()),
        "cashier": cashier,
        "teller": teller,
        "metered": Swarm([clerk], "clerk", model=GatedModel(), ledger=_ledger()),
    }


def _ledger() -> Ledger:
    """The metered clerk's ledger, in the state folder (opened on its first call)."""
    where = Path(os.environ.get(STATE_DIR, ".")) / "spend.sqlite"
    return Ledger(where, [Budget(name="calls", limit=10, unit="calls")])


COURIER_ROUNDS = 3
"""Tool rounds of a courier session: 7 steps (model, tool, model, tool, model, tool, model)."""


def _note(name: str, line: str) -> None:
    with (Path(os.environ[STATE_DIR]) / name).open("a") as notes:
        notes.write(line + "\n")


@tool
async def track(parcel: str, context: RunContext) -> str:
    """Track a parcel, noting the session's prompt and the call's idempotency key."""
    _note("tracked.txt", f"{parcel}|{context.idempotency_key}")
    return f"{parcel}: on its way"


class CourierModel:
    """Calls track COURIER_ROUNDS times, then answers; each call noted as ``prompt|round``."""

    name = "courier"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """The next step, decided from the request alone (any worker process continues it)."""
        done = sum(isinstance(m, ToolMessage) for m in request.messages)
        parcel = str(request.messages[-1 - 2 * done].content)
        _note("courier.txt", f"{parcel}|{done}")
        if done >= COURIER_ROUNDS:
            return ModelResponse(message=AssistantMessage(content=f"{parcel} delivered"))
        arguments = json.dumps({"parcel": parcel})
        call = ToolCall(id=f"call_{done}", name="track", arguments=arguments)
        return ModelResponse(message=AssistantMessage(tool_calls=(call,)))


async def main(database_url: str, executor_id: str, journal: str, version: str | None) -> None:
    """Serve until SIGTERM (a clean stop) or SIGKILL (the test's crash)."""
    app = DurableSwarms(
        swarms(),
        database_url=database_url,
        journal=open_journal(journal),
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

courier = swarms()["courier"]
"""The courier as a ``module:attribute`` target (``tests.dbos.worker_app:courier``)."""
