"""Benchmark: swarmkit.evals overhead, regrading speed and replay speed, on the support desk.

Measured side by side in one run, on the offline DeskModel and an in-memory journal:
- eval overhead: `evaluate` on every task vs running the same dialogues directly with
  `swarm.run` into the same kind of journal (ratio; target <= 1.10);
- regrading 1,000 stored trials (seconds; target <= 2);
- replay mode: journal steps replayed per second (target >= 5,000).

    .venv/bin/python bench/evals.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from _size import size

from swarmkit import InMemoryJournal
from swarmkit.evals import evaluate, next_scripted, regrade, replay
from swarmkit.evals.support_desk import build_swarm, tasks
from swarmkit.interrupts import Decision, PendingDecision, approve


class _Approve:
    async def decide(self, pending: PendingDecision) -> Decision | None:
        return approve()


async def _direct(trials: int) -> float:
    """The same dialogues, run by hand: what an eval costs without the eval."""
    desk, swarm, journal = tasks(), build_swarm(), InMemoryJournal()
    start = time.perf_counter()
    for n in range(trials):
        for task in desk.tasks:
            database, previous = task.initial_database(desk.domain), None
            said: list[str] = []
            for turn in range(1, 11):
                message = next_scripted(task.turns, said)
                if message is None:
                    break
                sid = f"d-{task.id}-{n}" + ("" if turn == 1 else f"__turn_{turn}")
                previous = await swarm.run(
                    message,
                    context=task.context,
                    deps=database,
                    session_id=sid,
                    journal=journal,
                    history=previous,
                    decisions=_Approve(),
                )
                said.append(previous.final_output_text or "")
                if previous.stop_reason != "final_output":
                    break
    return time.perf_counter() - start


async def _eval(trials: int) -> float:
    journal = InMemoryJournal()
    start = time.perf_counter()
    report = await evaluate(tasks(), build_swarm(), trials=trials, journal=journal, concurrency=1)
    assert report.trials
    return time.perf_counter() - start


async def main(rounds: int) -> None:
    trials = size(5)
    ratios = []
    for i in range(rounds):
        if i % 2:
            direct = await _direct(trials)
            took = await _eval(trials)
        else:
            took = await _eval(trials)
            direct = await _direct(trials)
        ratios.append(took / direct)
    shown = [round(r, 3) for r in ratios]
    print(f"eval overhead per trial: {statistics.median(ratios):.3f}x direct runs ({shown})")
    big = InMemoryJournal()
    report = await evaluate(tasks(), build_swarm(), trials=size(46), journal=big, concurrency=8)
    stored = len(report.trials)
    start = time.perf_counter()
    await regrade(report.run_id, tasks(), big)
    took = time.perf_counter() - start
    print(
        f"regrade: {stored} stored trials in {took:.3f} s ({1000 * took / stored:.3f} s per 1,000)"
    )
    start = time.perf_counter()
    replayed = await replay(report.run_id, tasks(), build_swarm(), big)
    took = time.perf_counter() - start
    steps = replayed.extra["replayed_steps"]
    print(f"replay: {steps} steps in {took:.3f} s = {steps / took:,.0f} steps/s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    asyncio.run(main(parser.parse_args().rounds))
