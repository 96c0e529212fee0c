"""Check speed: ``swarm.check()`` on 50 agents and 500 rule edges (target: under 100 ms).

Each agent has 10 conditional rule edges (a mix of equality, ranges, lists and ``swarm.*``
facts, some contradictory, some shadowed) and a typed ``context_type``, so every analysis
runs. The figure is the median of several checks of a freshly built swarm, each cold (the
check's cache of resolved context paths is emptied first). Conditions are compiled when the
graph is built, as in any swarm, so that cost is not part of the check.
Run: ``make bench`` or ``.venv/bin/python bench/check.py``.
"""

from __future__ import annotations

import statistics
import time

from _size import size
from pydantic import BaseModel

from swarmkit import Agent, HandoffGraph, Swarm
from swarmkit.check._conditions import _resolve_declared
from swarmkit.testing import NeverCalledModel

AGENTS = size(50, 3)
EDGES_PER_AGENT = 10
RUNS = size(9)
TARGET_MS = 100.0


class Ticket(BaseModel):
    """The declared context of the benchmark swarm."""

    category: str = ""
    priority: int = 0
    tags: list[str] = []


def _condition(agent: int, edge: int) -> str:
    shapes = [
        f"category == 'c{edge}' and priority > {edge}",
        f"priority >= {edge} and priority < {edge + 3} and category != 'x'",
        f"'t{edge}' in tags or swarm.turn > {edge}",
        f"category in ['a{edge}', 'b{edge}'] and swarm.handoff_count < 3",
        f"priority == {edge} and priority == {edge + 1}",
        f"swarm.previous_agent == 'a{(agent + 1) % AGENTS}' and priority <= 9",
    ]
    return shapes[(agent + edge) % len(shapes)]


def build_swarm() -> Swarm:
    """50 agents in a ring of rules, 10 edges each."""
    graph = HandoffGraph(on_cycle="allow")
    for agent in range(AGENTS):
        for edge in range(EDGES_PER_AGENT):
            target = f"a{(agent + edge + 1) % AGENTS}"
            graph.add_edge(f"a{agent}", target, when=_condition(agent, edge))
    agents = [Agent(name=f"a{n}") for n in range(AGENTS)]
    return Swarm(agents, "a0", model=NeverCalledModel(), graph=graph, context_type=Ticket)


def main() -> None:
    """Print the median check time against the target."""
    timings = []
    findings = 0
    for _ in range(RUNS):
        swarm = build_swarm()
        _resolve_declared.cache_clear()  # cold: no path of the context_type resolved yet
        start = time.perf_counter()
        findings = len(swarm.check())
        timings.append((time.perf_counter() - start) * 1000)
    median = statistics.median(timings)
    edges = AGENTS * EDGES_PER_AGENT
    print(f"check(): {AGENTS} agents, {edges} rule edges, {findings} findings")
    low = min(timings)
    print(
        f"median {median:.1f} ms (min {low:.1f} ms) over {RUNS} runs; target < {TARGET_MS:.0f} ms"
    )
    if median >= TARGET_MS:
        raise SystemExit(f"check() took {median:.1f} ms, over the {TARGET_MS:.0f} ms target")


if __name__ == "__main__":
    main()
