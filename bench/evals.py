"""Benchmark: swarmkit.evals overhead, regrading speed and replay speed, on the support desk.

Measured side by side in one run, on the offline DeskModel and an in-memory journal:
- eval overhead: `evaluate` on every task vs running the same dialogues directly with
  `swarm.run` into the same kind of journal, each task's approver answering as the task says
  (ratio of CPU time, min / median / max over the rounds, after one round to warm up; wall
  time beside it; target <= 1.10);
- regrading 1,000 stored trials (seconds; target <= 2);
- replay mode: journal steps replayed per second (target >= 5,000).

    .venv/bin/python bench/evals.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time

from _size import size

from swarmkit import InMemoryJournal
from swarmkit.evals import evaluate, next_scripted, regrade, replay
from swarmkit.evals.support_desk import build_swarm, tasks
from swarmkit.interrupts import Decision, PendingDecision, approve, reject


class _Approver:
    """The simulated supervisor, answering as each task says (one task rejects its refund)."""

    def __init__(self, answer: str) -> None:
        self.answer = answer

    async def decide(self, pending: PendingDecision) -> Decision | None:
        return approve() if self.answer == "approve" else reject("the approver declined")


Took = tuple[float, float]
"""(CPU seconds, wall seconds)."""


def _clocks() -> Took:
    return time.process_time(), time.perf_counter()


def _start() -> Took:
    gc.collect()  # the other side's garbage is not this side's cost
    return _clocks()


def _since(start: Took) -> Took:
    now = _clocks()
    return now[0] - start[0], now[1] - start[1]


async def _direct(trials: int) -> Took:
    """The same dialogues, run by hand: what an eval costs without the eval."""
    desk, swarm, journal = tasks(), build_swarm(), InMemoryJournal()
    start = _start()
    approving = {a: swarm.with_seams(decisions=_Approver(a)) for a in ("approve", "reject")}
    for n in range(trials):
        for task in desk.tasks:
            database, previous = task.initial_database(desk.domain), None
            said: list[str] = []
            for turn in range(1, 11):
                message = next_scripted(task.turns, said)
                if message is None:
                    break
                sid = f"d-{task.id}-{n}" + ("" if turn == 1 else f"__turn_{turn}")
                previous = await approving[task.approvals].run(
                    message,
                    context=task.context,
                    deps=database,
                    session_id=sid,
                    journal=journal,
                    history=previous,
                )
                said.append(previous.final_output_text or "")
                if previous.stop_reason != "final_output":
                    break
    return _since(start)


async def _eval(trials: int) -> Took:
    desk, swarm, journal = tasks(), build_swarm(), InMemoryJournal()
    start = _start()
    report = await evaluate(desk, swarm, trials=trials, journal=journal, concurrency=1)
    took = _since(start)
    assert report.trials
    return took


def _spread(ratios: list[float]) -> str:
    low, mid, high = min(ratios), statistics.median(ratios), max(ratios)
    return f"{mid:.3f}x (min {low:.3f}, max {high:.3f})"


async def main(rounds: int) -> None:
    trials = size(5)
    await _eval(1), await _direct(1)  # imports and caches warm, outside the rounds
    cpu, wall = [], []
    for i in range(rounds):
        if i % 2:
            direct = await _direct(trials)
            evaluated = await _eval(trials)
        else:
            evaluated = await _eval(trials)
            direct = await _direct(trials)
        cpu.append(evaluated[0] / direct[0])
        wall.append(evaluated[1] / direct[1])
    print(f"eval overhead per trial: CPU {_spread(cpu)} direct runs; wall {_spread(wall)}")
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
