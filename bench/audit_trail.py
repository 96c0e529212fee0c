"""Cost of the audit trail: journaling and replaying sessions with a tool call per session.

Run it against two trees and compare the ratios side by side, e.g.
``PYTHONPATH=<tree> python bench/audit_trail.py``; it prints seconds per 1,000 sessions for
running into an SQLite journal and for replaying from it.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from _size import size

from swarmkit import Agent, Swarm, tool
from swarmkit.journal import SQLiteJournal
from swarmkit.testing import NeverCalledModel, ScriptedModel, text, tool_call

SESSIONS = size(300, 3)


@tool
def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: shipped"


def _swarm(model: object) -> Swarm:
    return Swarm([Agent(name="a", tools=[lookup])], "a", model=model)  # type: ignore[arg-type]


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder, SQLiteJournal(Path(folder) / "j.sqlite") as j:
        started = time.perf_counter()
        for n in range(SESSIONS):
            model = ScriptedModel(tool_call("lookup", order=str(n)), text("done"))
            await _swarm(model).run("where is it", session_id=f"s{n}", journal=j)
        ran = time.perf_counter() - started
        started = time.perf_counter()
        offline = _swarm(NeverCalledModel())
        for n in range(SESSIONS):
            await offline.replay(f"s{n}", j)
        replayed = time.perf_counter() - started
    per = 1000 / SESSIONS
    print(f"run into SQLite: {ran * per:.2f} s per 1,000 sessions")
    print(f"replay:          {replayed * per:.2f} s per 1,000 sessions")


if __name__ == "__main__":
    asyncio.run(main())
