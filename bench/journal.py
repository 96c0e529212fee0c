"""Journal speed: replaying a 1,000-step session, and a session with the SQLite journal on vs off.

A step is one journal record (a model call, a tool call, a handoff, ...). The on/off pair runs
bench/session.py's two-call session through the real ``openai`` client on an in-process
transport, interleaved in rounds; medians are compared.
Run: ``make bench`` or ``.venv/bin/python bench/journal.py``.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from openai import AsyncOpenAI

from swarmkit import Agent, OpenAIModel, Swarm, tool
from swarmkit.journal import SQLiteJournal
from swarmkit.testing import ScriptedModel, text, tool_call

sys.path.insert(0, str(Path(__file__).parent))
from session import PROMPT, _client

TOOL_TURNS = 499
REPLAYS = 7
ROUNDS = 15
SESSIONS_PER_ROUND = 30


@tool
def lookup(invoice_id: str) -> str:
    """Look up an invoice."""
    return f"{invoice_id}: paid"


def _long_swarm(model: ScriptedModel) -> Swarm:
    agent = Agent(name="clerk", instructions="Check every invoice.", tools=[lookup])
    return Swarm([agent], "clerk", model=model, max_turns=TOOL_TURNS + 1)


async def replay_speed(folder: Path) -> None:
    """Record a long session once, then time strict replays of it."""
    script = [tool_call("lookup", invoice_id=f"A-{i}") for i in range(TOOL_TURNS)]
    journal = SQLiteJournal(folder / "long.sqlite")
    await _long_swarm(ScriptedModel(*script, text("All paid."))).run(
        "check all", session_id="long", journal=journal
    )
    steps = len(await journal.read("long"))
    swarm = _long_swarm(ScriptedModel())
    timings = []
    for _ in range(REPLAYS):
        started = time.perf_counter()
        await swarm.replay("long", journal)
        timings.append(time.perf_counter() - started)
    best, median = min(timings), statistics.median(timings)
    print(f"replay: {steps} steps in {median * 1e3:.1f} ms (median), {best * 1e3:.1f} ms (best)")
    print(f"replay: {steps / median:,.0f} steps/s (median), {steps / best:,.0f} steps/s (best)")


async def journal_overhead(folder: Path) -> None:
    """A two-call session with the SQLite journal on vs off, interleaved in rounds."""
    client = _client()
    journal = SQLiteJournal(folder / "sessions.sqlite")
    swarm_on = _journaled_swarm(client, journal)
    swarm_off = _journaled_swarm(client, None)

    async def time_one(swarm: Swarm) -> float:
        started = time.perf_counter()
        for _ in range(SESSIONS_PER_ROUND):
            await swarm.run(PROMPT)
        return (time.perf_counter() - started) / SESSIONS_PER_ROUND

    await time_one(swarm_off)
    await time_one(swarm_on)
    off, on = [], []
    for _ in range(ROUNDS):
        off.append(await time_one(swarm_off))
        on.append(await time_one(swarm_on))
    off_m, on_m = statistics.median(off), statistics.median(on)
    print(f"session, journal off: {off_m * 1e6:.0f} µs; on (SQLite): {on_m * 1e6:.0f} µs")
    print(f"journal on / off: {on_m / off_m:.3f}x")


def _journaled_swarm(client: AsyncOpenAI, journal: SQLiteJournal | None) -> Swarm:
    model = OpenAIModel("gpt-bench", client=client)
    triage = Agent(name="triage", instructions="You route tickets.")
    billing = Agent(name="billing", instructions="You handle billing.", handoffs=[])
    return Swarm([triage, billing], "triage", model=model, journal=journal)


async def main() -> None:
    """Run both measurements in a temporary folder."""
    with tempfile.TemporaryDirectory() as folder:
        await replay_speed(Path(folder))
        await journal_overhead(Path(folder))


if __name__ == "__main__":
    asyncio.run(main())
