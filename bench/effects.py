"""Cost of an effect against a plain tool: sessions with one tool call each, in SQLite.

``PYTHONPATH=. python bench/effects.py`` prints seconds per 1,000 sessions for a plain tool
and for the same tool declared ``effect=True`` (its intent committed before the call), run
into an SQLite journal and replayed from it, and the effect's ratio to the plain tool.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from swarmkit import Agent, FunctionTool, Swarm, tool
from swarmkit.journal import SQLiteJournal
from swarmkit.testing import NeverCalledModel, ScriptedModel, text, tool_call

SESSIONS = 300


def _lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: shipped"


PLAIN = tool(name="lookup")(_lookup)
EFFECT = tool(name="lookup", effect=True)(_lookup)


def _swarm(function: FunctionTool, model: object) -> Swarm:
    return Swarm([Agent(name="a", tools=[function])], "a", model=model)  # type: ignore[arg-type]


async def _timed(function: FunctionTool) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as folder, SQLiteJournal(Path(folder) / "j.sqlite") as j:
        started = time.perf_counter()
        for n in range(SESSIONS):
            model = ScriptedModel(tool_call("lookup", order=str(n)), text("done"))
            await _swarm(function, model).run("where is it", session_id=f"s{n}", journal=j)
        ran = time.perf_counter() - started
        started = time.perf_counter()
        offline = _swarm(function, NeverCalledModel())
        for n in range(SESSIONS):
            await offline.replay(f"s{n}", j)
        return ran, time.perf_counter() - started


async def main() -> None:
    per = 1000 / SESSIONS
    plain = await _timed(PLAIN)
    effect = await _timed(EFFECT)
    for what, a, b in (("run", plain[0], effect[0]), ("replay", plain[1], effect[1])):
        print(
            f"{what:6}: plain {a * per:.2f} s, effect {b * per:.2f} s per 1,000 sessions "
            f"({b / a:.2f}x)"
        )


if __name__ == "__main__":
    asyncio.run(main())
