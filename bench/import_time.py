"""A program's start: ``from swarmkit import Agent, Swarm`` plus building an OpenAIModel.

Each round starts a fresh interpreter per tree (this one, and ``--against PATH`` when given),
alternating, so both see the same load. The figure is the CPU time of the import and the
construction (the interpreter's own start-up left out), min / median / max over the rounds,
and whether ``openai`` was loaded by then (target: at most 0.15 s, no ``openai``).
Run: ``.venv/bin/python bench/import_time.py [--against PATH] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 0.15
PROBE = """
import json, sys, time
wall, cpu = time.perf_counter(), time.process_time()
from swarmkit import Agent, Swarm
from swarmkit.models import OpenAIModel
model = OpenAIModel("gpt-4o", api_key="sk-bench-key")
agent = Agent(name="a", instructions="hi", model=model)
print(json.dumps({"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall,
                  "openai": "openai" in sys.modules}))
"""


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--against", type=Path, help="another checkout to compare with")
    options.add_argument("--rounds", type=int, default=11)
    args = options.parse_args()
    trees = {"this": ROOT} | ({"against": args.against} if args.against else {})
    figures: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            figures[name].append(_probe(tree))
    for name, runs in figures.items():
        cpu = sorted(run["cpu"] for run in runs)
        wall = statistics.median(run["wall"] for run in runs)
        verdict = "met" if statistics.median(cpu) <= TARGET_S else "not met"
        print(
            f"{name}: CPU {cpu[0]:.3f} / {statistics.median(cpu):.3f} / {cpu[-1]:.3f} s "
            f"(wall median {wall:.3f} s), openai loaded: {bool(runs[0]['openai'])}; "
            f"target <= {TARGET_S} s: {verdict}"
        )
    if args.against:
        ratio = statistics.median(r["cpu"] for r in figures["this"]) / statistics.median(
            r["cpu"] for r in figures["against"]
        )
        print(f"ratio this/against (median CPU): {ratio:.2f}x")


def _probe(tree: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=tree, capture_output=True, text=True, check=True
    )
    figure: dict[str, float] = json.loads(done.stdout)
    return figure


if __name__ == "__main__":
    main()
