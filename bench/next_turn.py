"""Next-turn policy cost: a continuing turn under ``"last"``, ``"entry"`` and a 20-rule
``NextTurn``, side by side as ratios to ``"last"`` (the old behaviour).

Each figure is the median of several runs of 200 continuing turns (``history=`` the previous
result, a scripted model, no journal), so it is the policy's share of a whole turn that shows.
Run: ``.venv/bin/python bench/next_turn.py``.
"""

from __future__ import annotations

import asyncio
import statistics
import time

from _size import size

from swarmkit import Agent, NextTurn, Swarm
from swarmkit.conversation import NextTurnSetting
from swarmkit.testing import ScriptedModel, text

TURNS = size(200, 2)
RUNS = size(5)
RULES = NextTurn(
    rules=[(f"tier == 'gold{n}' and 'refund' in swarm.message", "billing") for n in range(19)]
    + [("swarm.agent == 'billing' and 'invoice' not in swarm.message", "triage")]
)


async def turns(next_turn: NextTurnSetting) -> float:
    """Seconds for TURNS continuing turns of one conversation."""
    model = ScriptedModel(*(text(f"answer {n}") for n in range(TURNS + 1)))
    agents = [Agent(name="triage"), Agent(name="billing")]
    swarm = Swarm(agents, "triage", model=model, next_turn=next_turn)
    result = await swarm.run("hello", context={"tier": "silver"}, start_agent="billing")
    started = time.perf_counter()
    for n in range(TURNS):
        result = await swarm.run(f"about the invoice {n}", history=result)
    return time.perf_counter() - started


def median(next_turn: NextTurnSetting) -> float:
    """The median of RUNS timings."""
    return statistics.median(asyncio.run(turns(next_turn)) for _ in range(RUNS))


def main() -> None:
    base = median("last")
    for label, seconds in (
        ("last", base),
        ("entry", median("entry")),
        ("20 rules", median(RULES)),
    ):
        print(f"{label:<18} {seconds / TURNS * 1e3:7.3f} ms/turn   ratio {seconds / base:5.2f}")


if __name__ == "__main__":
    main()
