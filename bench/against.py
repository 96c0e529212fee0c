"""This tree against another checkout, side by side in one run (issue 34's speed targets).

Two worker processes, one importing swarmkit from this tree and one from ``--against PATH``
(a worktree of the commit to compare with), take turns round by round, so the machine's load
drifts out of the ratios; each figure is reported as min / median / max of the per-round
ratios. Python function calls (cProfile's ``total_calls``) per session or step are counted
once per side: that figure does not depend on the load.

- ``session``: the two-call LLM-handoff session (``bench/session.py``) over two raw
  ``client.chat.completions.create`` calls, measured in the same round (target <= 0.5x).
- ``replay``: strict replay from SQLite of 100, 1,000 and 10,000-step sessions, steps/s
  (target >= 50,000 at every length).
- ``journal``: the journal's cost per tool turn (on minus off, 100-turn sessions, target
  <= 50 µs) and the two-call session with the SQLite journal on / off (target <= 1.10x).
- ``floor`` (asked for by name): the journal's CPU cost per tool turn over raw ``sqlite3``
  doing the same commits, alone in a loop and inside the run (``bench/journal.py --flat``'s
  rows, 100 and 1,000-turn sessions; target <= 2x), and tool turns on / off.
- ``tracing``: the two-call session traced to an in-memory exporter over untraced (<= 1.15x).
- ``memory``: bytes held per session with 1,000 sessions in flight, each waiting in its
  second model call (tracemalloc; target <= 10 KiB).

Run: ``.venv/bin/python bench/against.py --against /path/to/checkout [--rounds N] [which...]``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from _size import TINY, size

HERE = Path(__file__).resolve().parent
SESSIONS = size(30, 2)
REPLAY_LENGTHS = (100, 1_000, 10_000) if not TINY else (10,)
TURNS = size(100, 2)
IN_FLIGHT = size(1_000, 3)
CLOCK = time.process_time
"""Sessions are timed in CPU time: the machine is shared, and waiting for a core is not ours."""


def _calls(run: Callable[[], Awaitable[object]], per: int) -> float:
    """Python function calls of ``run`` (cProfile's total_calls), divided by ``per``."""
    return _profile(run, per)[0]


def _profile(run: Callable[[], Awaitable[object]], per: int) -> tuple[float, float]:
    """All Python function calls of ``run``, and those of swarmkit's own functions, per ``per``."""
    profile = cProfile.Profile()
    profile.enable()
    asyncio.get_event_loop().run_until_complete(run())
    profile.disable()
    stats = pstats.Stats(profile)
    own = sum(
        row[1]
        for (path, _, _), row in stats.stats.items()  # type: ignore[attr-defined]
        if f"swarmkit{os.sep}" in path
    )
    return stats.total_calls / per, own / per  # type: ignore[attr-defined]


class Worker:
    """The measurements, in the process whose PYTHONPATH picks the swarmkit."""

    def __init__(self) -> None:
        sys.path.insert(0, str(HERE))
        import journal as journal_bench  # noqa: PLC0415 - bench/journal.py
        import session as session_bench  # noqa: PLC0415 - bench/session.py

        self.sb, self.jb = session_bench, journal_bench
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        self.root = Path(tempfile.mkdtemp())
        client = session_bench._client()
        self.client = client
        self.raw = session_bench._raw_floor(client)
        self.plain = session_bench._swarm(client, rule=False)
        self.traced = session_bench._traced(client, batch=False)
        self.replays: dict[int, Any] = {}

    def run(self, work: Awaitable[Any]) -> Any:
        return self.loop.run_until_complete(work)

    async def _each(self, session: Callable[[], Awaitable[object]], count: int) -> float:
        started = CLOCK()
        for _ in range(count):
            await session()
        return (CLOCK() - started) / count

    def _paired(
        self, first: Callable[[], Awaitable[object]], second: Callable[[], Awaitable[object]]
    ) -> tuple[float, float]:
        """Seconds per session of each, taking turns session by session (load drifts out)."""

        async def both() -> tuple[float, float]:
            spent = [0.0, 0.0]
            for _ in range(SESSIONS):
                for index, session in enumerate((first, second)):
                    started = CLOCK()
                    await session()
                    spent[index] += CLOCK() - started
            return spent[0] / SESSIONS, spent[1] / SESSIONS

        return self.run(both())  # type: ignore[no-any-return]

    def session(self) -> dict[str, float]:
        raw, ours = self._paired(self.raw, self.plain)
        return {"raw_us": raw * 1e6, "swarm_us": ours * 1e6, "ratio": ours / raw}

    def tracing(self) -> dict[str, float]:
        off, on = self._paired(self.plain, self.traced)
        return {"off_us": off * 1e6, "on_us": on * 1e6, "ratio": on / off}

    def _replay_setup(self) -> None:
        from swarmkit import Agent, SQLiteJournal, Swarm  # noqa: PLC0415
        from swarmkit.testing import ScriptedModel  # noqa: PLC0415

        for steps in REPLAY_LENGTHS:
            journal = SQLiteJournal(self.root / f"replay-{steps}.sqlite")
            swarm = self.jb._tool_session(max(1, (steps - 3) // 2))
            self.run(swarm.run("check all", session_id="long", journal=journal))
            records = self.run(journal.read("long"))
            self.replays[len(records)] = journal
        agent = Agent(name="clerk", instructions="Check every invoice.", tools=[self.jb.lookup])
        self.replayer = Swarm([agent], "clerk", model=ScriptedModel(), max_turns=10_001)

    def replay(self) -> dict[str, float]:
        if not self.replays:
            self._replay_setup()
        out: dict[str, float] = {}
        in_gc = [0.0, 0.0]

        def timing(phase: str, info: dict[str, Any]) -> None:
            if phase == "start":
                in_gc[1] = time.perf_counter()
            else:
                in_gc[0] += time.perf_counter() - in_gc[1]

        for steps, journal in self.replays.items():
            best, gc_share, cpu = float("inf"), 0.0, float("inf")
            for _ in range(3):  # best of three: the machine's load only ever adds
                gc.collect()
                in_gc[0] = 0.0
                gc.callbacks.append(timing)
                started, cpu_started = time.perf_counter(), CLOCK()
                self.run(self.replayer.replay("long", journal))
                spent, cpu = time.perf_counter() - started, min(cpu, CLOCK() - cpu_started)
                gc.callbacks.remove(timing)
                if spent < best:
                    best, gc_share = spent, in_gc[0] / spent
            out[f"steps_per_s_{steps}"] = steps / best
            out[f"cpu_steps_per_s_{steps}"] = steps / cpu  # CPU time: the load does not move it
            out[f"gc_share_{steps}"] = gc_share
        return out

    def journal(self) -> dict[str, float]:
        from swarmkit import SQLiteJournal  # noqa: PLC0415

        journal = SQLiteJournal(self.root / "turns.sqlite")
        sessions = 5
        swarms = [self.jb._tool_session(TURNS) for _ in range(2 * sessions)]

        async def per_turn(batch: list[Any], on: bool) -> float:
            started = time.perf_counter()
            for swarm in batch:
                await swarm.run("check all", journal=journal if on else None)
            return (time.perf_counter() - started) / (len(batch) * TURNS)

        off = self.run(per_turn(swarms[:sessions], False))
        on = self.run(per_turn(swarms[sessions:], True))
        chat = self.jb._chat_swarm(self.client, SQLiteJournal(self.root / "chat.sqlite"))
        chat_off, chat_on = self._paired(self.plain, lambda: chat.run(self.sb.PROMPT))
        return {"turn_cost_us": (on - off) * 1e6, "on_off": chat_on / chat_off}

    def memory(self) -> dict[str, float]:
        from swarmkit import Agent, Swarm  # noqa: PLC0415
        from swarmkit.testing import ScriptedModel, text, transfer  # noqa: PLC0415

        gate = asyncio.Event()

        class Gated(ScriptedModel):
            """Hands off to billing, then billing's call waits on the gate."""

            waiting = False

            async def respond(self, request: Any) -> Any:
                if self.requests:
                    self.waiting = True
                    await gate.wait()
                return await super().respond(request)

        async def measure() -> float:
            models = [Gated(transfer("billing"), text("Refunded.")) for _ in range(IN_FLIGHT)]
            swarms = [
                Swarm(
                    [
                        Agent(name="triage", instructions="You route tickets."),
                        Agent(name="billing", instructions="You handle billing.", handoffs=[]),
                    ],
                    "triage",
                    model=model,
                )
                for model in models
            ]
            gc.collect()
            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
            tasks = [asyncio.ensure_future(s.run(self.sb.PROMPT)) for s in swarms]
            while not all(model.waiting for model in models):
                await asyncio.sleep(0)
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - before
            tracemalloc.stop()
            gate.set()
            await asyncio.gather(*tasks)
            return held / IN_FLIGHT

        return {"bytes_per_session": self.run(measure())}

    def calls(self) -> dict[str, float]:
        if not self.replays:
            self._replay_setup()
        out: dict[str, float] = {}
        for name, session in (("session", self.plain), ("traced", self.traced)):
            total, own = _profile(lambda s=session: self._each(s, 20), 20)  # type: ignore[misc]
            out[f"{name}_calls"], out[f"{name}_swarmkit_calls"] = total, own
        for steps, journal in self.replays.items():
            out[f"replay_calls_per_step_{steps}"] = _calls(
                lambda j=journal: self.replayer.replay("long", j),  # type: ignore[misc]
                steps,
            )
        from swarmkit import SQLiteJournal  # noqa: PLC0415

        journal = SQLiteJournal(self.root / "calls.sqlite")
        swarms = [self.jb._tool_session(TURNS) for _ in range(2)]
        off = _calls(lambda: swarms[0].run("check all"), TURNS)
        on = _calls(lambda: swarms[1].run("check all", journal=journal), TURNS)
        out["journal_calls_per_turn"] = on - off
        return out


def _floor(worker: Worker) -> dict[str, float]:
    """One round of bench/journal.py's per-turn rows: cost, its ratio to both floors, on/off."""
    counts = (100, 1_000) if not TINY else (2,)
    rows = worker.run(worker.jb.turn_cost_rows(Path(tempfile.mkdtemp()), counts, 1))
    out: dict[str, float] = {}
    for turns in counts:
        cost = rows.costs[turns][0]
        out[f"cost_us_{turns}"] = cost * 1e6
        out[f"over_floor_{turns}"] = cost / rows.floors[turns][0]
        out[f"over_floor_in_run_{turns}"] = cost / rows.in_run[turns][0]
        out[f"on_off_{turns}"] = rows.on_off[turns][0]
    return out


def worker_main() -> None:
    worker = Worker()
    for line in sys.stdin:
        name = line.strip()
        result = _floor(worker) if name == "floor" else getattr(worker, name)()
        print(json.dumps(result), flush=True)


def _spread(values: list[float], fmt: str = "{:.3f}") -> str:
    low, mid, high = min(values), statistics.median(values), max(values)
    return " / ".join(fmt.format(v) for v in (low, mid, high))


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--against", required=True, help="a checkout of the commit to compare")
    options.add_argument("--rounds", type=int, default=7)
    options.add_argument(
        "which", nargs="*", default=["session", "replay", "journal", "tracing", "memory", "calls"]
    )
    args = options.parse_args()
    sides = {"before": str(Path(args.against).resolve()), "after": str(HERE.parent)}
    workers = {}
    for side, path in sides.items():
        env = {**os.environ, "PYTHONPATH": path}
        workers[side] = subprocess.Popen(
            [sys.executable, __file__, "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )

    def ask(side: str, name: str) -> dict[str, float]:
        worker = workers[side]
        assert worker.stdin is not None and worker.stdout is not None
        worker.stdin.write(name + "\n")
        worker.stdin.flush()
        return json.loads(worker.stdout.readline())  # type: ignore[no-any-return]

    for name in args.which:
        rounds = 1 if name in ("calls", "memory") else args.rounds
        samples: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
        if rounds > 1:
            for side in sides:
                ask(side, name)  # warm-up
        for index in range(rounds):
            order = ("before", "after") if index % 2 == 0 else ("after", "before")
            for side in order:
                samples[side].append(ask(side, name))
        print(f"== {name} ({rounds} interleaved rounds; min / median / max)")
        for key in samples["after"][0]:
            before = [s[key] for s in samples["before"]]
            after = [s[key] for s in samples["after"]]
            change = [a / b if b else float("nan") for a, b in zip(after, before, strict=True)]
            print(
                f"  {key:28} before {_spread(before)}  after {_spread(after)}  "
                f"after/before {_spread(change)}"
            )
    for worker in workers.values():
        assert worker.stdin is not None
        worker.stdin.close()
        worker.wait()


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker_main()
    else:
        main()
