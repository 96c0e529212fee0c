"""Scale: many concurrent journaled sessions on one SQLiteJournal, and listing many sessions.

Rows:
(a) 1,000 two-call handoff sessions (a scripted model that yields to the loop once per call,
    as a network answer would) gathered on one event loop and sharing one SQLiteJournal, vs the
    same 1,000 run one after another on their own journal, vs 1,000 gathered without a journal
    (for context). Contenders alternate within each round; min/median/max over rounds and the
    median of the per-round ratios.
(b) The event loop's longest stall: a ticker task wakes every millisecond and records how late
    it woke. Measured during (a), where every loop pass holds ~1,000 sessions' Python work, and
    in a paced run where each model call takes a few milliseconds (deterministic jitter) so the
    loop is mostly idle and a stall is what one callback, e.g. a journal write, holds it for.
    The same run without a journal is the floor.
(c) Listing 20,000 and 100,000 sessions, through ``journal.sessions()`` and through the
    ``swarmkit sessions`` command (run in process, its table written to a buffer).
Run: ``make bench`` or ``.venv/bin/python bench/scale.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, NamedTuple

from _size import size

import swarmkit
from swarmkit import Agent, RunResult, Swarm
from swarmkit.cli import main as cli_main
from swarmkit.journal import SQLiteJournal
from swarmkit.messages import AssistantMessage, ToolCall
from swarmkit.models import ModelRequest, ModelResponse, Usage

SESSIONS = size(1_000, 5)
ROUNDS = size(5)
PACED_ROUNDS = size(3)
LISTED = (20_000, 100_000)
LISTINGS = size(5)
TICK = 0.001
ARRIVALS = 1.0
PROMPT = "I was charged twice for invoice A-1."
USAGE = Usage(prompt_tokens=50, completion_tokens=10, total_tokens=60)


class HandoffModel:
    """Triage transfers to billing, billing answers; each call waits ``latency()`` seconds."""

    name = "bench"

    def __init__(self, latency: Callable[[], float]) -> None:
        self._latency = latency

    async def respond(self, request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(self._latency())
        if request.agent == "triage":
            call = ToolCall(id="call_1", name="transfer_to_billing", arguments="{}")
            message = AssistantMessage(content=None, tool_calls=(call,))
            return ModelResponse(message=message, usage=USAGE, finish_reason="tool_calls")
        message = AssistantMessage(content="Refund issued for A-1.", tool_calls=())
        return ModelResponse(message=message, usage=USAGE, finish_reason="stop")


def _swarm(latency: Callable[[], float]) -> Swarm:
    billing = Agent(name="billing", instructions="You handle billing.")
    triage = Agent(name="triage", instructions="You route tickets.", handoffs=[billing])
    return Swarm([triage, billing], "triage", model=HandoffModel(latency))


class Ticker:
    """Wakes every TICK seconds and keeps the worst lateness of a wake-up; also the most CPU
    time one loop callback took (a task step, a commit), which the machine's other load
    does not inflate."""

    def __init__(self) -> None:
        self.worst = 0.0
        self.longest_callback = 0.0
        self._task: asyncio.Task[None] | None = None
        self._run = asyncio.events.Handle._run

    async def __aenter__(self) -> Ticker:
        original = self._run

        def timed(handle: asyncio.Handle) -> None:
            started = time.thread_time()
            original(handle)
            self.longest_callback = max(self.longest_callback, time.thread_time() - started)

        asyncio.events.Handle._run = timed  # type: ignore[method-assign,assignment]
        self._task = asyncio.create_task(self._tick())
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        asyncio.events.Handle._run = self._run  # type: ignore[method-assign]

    async def _tick(self) -> None:
        while True:
            due = time.perf_counter() + TICK
            await asyncio.sleep(TICK)
            self.worst = max(self.worst, time.perf_counter() - due)


class Sample(NamedTuple):
    """One contender's round."""

    seconds: float
    cpu: float
    stall: float
    callback: float


Contender = Callable[[Path], Coroutine[Any, Any, Sample]]
"""Runs the sessions with a journal in the given folder."""


def _many(
    *,
    concurrent: bool,
    journaled: bool,
    latency: Callable[[], float],
    arrivals: Callable[[], float] = lambda: 0.0,
) -> Contender:
    async def contender(folder: Path) -> Sample:
        swarm = _swarm(latency)
        with SQLiteJournal(folder / "scale.db") as journal:
            await swarm.run("warm up", journal=journal if journaled else None)

            async def session(delay: float) -> RunResult:
                if delay:
                    await asyncio.sleep(delay)
                return await swarm.run(PROMPT, journal=journal if journaled else None)

            sessions = [session(arrivals()) for _ in range(SESSIONS)]
            # Tasks made before the ticker starts: making 1,000 at once is one long callback.
            tasks = [asyncio.ensure_future(s) for s in sessions] if concurrent else []
            async with Ticker() as ticker:
                started, cpu = time.perf_counter(), time.process_time()
                if concurrent:
                    results = await asyncio.gather(*tasks)
                else:
                    results = [await session for session in sessions]
                elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
            if journaled:
                listed = await journal.sessions()
                assert len(listed) == SESSIONS + 1, len(listed)
        assert all(r.stop_reason == "final_output" for r in results)
        return Sample(elapsed, cpu, ticker.worst, ticker.longest_callback)

    return contender


def _spread(values: list[float], scale: float = 1.0, unit: str = "s") -> str:
    low, mid, high = min(values) * scale, statistics.median(values) * scale, max(values) * scale
    return f"min {low:.3f} / median {mid:.3f} / max {high:.3f} {unit}"


def _rounds(contenders: dict[str, Contender], rounds: int) -> dict[str, list[Sample]]:
    samples: dict[str, list[Sample]] = {name: [] for name in contenders}
    for number in range(rounds):
        order = list(contenders.items())
        if number % 2:
            order.reverse()
        for name, contender in order:
            with tempfile.TemporaryDirectory() as folder:
                samples[name].append(asyncio.run(contender(Path(folder))))
    return samples


def _ratios(mine: list[Sample], other: list[Sample], field: str) -> list[float]:
    return [getattr(a, field) / getattr(b, field) for a, b in zip(mine, other, strict=True)]


def concurrency() -> None:
    """Rows (a) and (b): throughput, ratio and loop stalls."""
    contenders = {
        f"{how}, {label}": _many(concurrent=how == "concurrent", journaled=on, latency=lambda: 0.0)
        for how in ("concurrent", "sequential")
        for label, on in (("journal", True), ("no journal", False))
    }
    samples = _rounds(contenders, ROUNDS)
    print(f"(a) {SESSIONS} two-call handoff sessions, {ROUNDS} interleaved rounds")
    for name, values in samples.items():
        print(f"  {name:<24} wall {_spread([v.seconds for v in values])}")
        print(f"  {'':<24} cpu  {_spread([v.cpu for v in values])}")
        print(f"  {'':<24} loop stall {_spread([v.stall for v in values], 1000, 'ms')}")
    journal, alone = samples["concurrent, journal"], samples["sequential, journal"]
    for field in ("seconds", "cpu"):
        ratios = _ratios(journal, alone, field)
        floor = _ratios(journal, samples["concurrent, no journal"], field)
        print(f"  concurrent/sequential (journal), {field}: {_spread(ratios, unit='x')}")
        print(f"  concurrent journal/no journal, {field}:   {_spread(floor, unit='x')}")
    cost = [
        (j.cpu - n.cpu) / SESSIONS * 1e6
        for j, n in zip(alone, samples["sequential, no journal"], strict=True)
    ]
    print(f"  journal CPU cost of one session run alone: {_spread(cost, unit='us')}")
    ratio = statistics.median(_ratios(journal, alone, "seconds"))
    verdict = "met" if ratio <= 1.3 else "not met"
    print(f"TARGET concurrent vs sequential <= 1.3x: {ratio:.2f}x wall ({verdict})")

    jitter = random.Random(14)
    paced = {
        f"paced, {label}": _many(
            concurrent=True,
            journaled=journaled,
            latency=lambda: jitter.uniform(0.0, 0.004),
            arrivals=lambda: jitter.uniform(0.0, ARRIVALS),
        )
        for label, journaled in (("journal", True), ("no journal", False))
    }
    paced_samples = _rounds(paced, PACED_ROUNDS)
    print(
        f"(b) loop stall, {SESSIONS} sessions arriving over {ARRIVALS:g} s, 0-4 ms model calls,"
        f" {PACED_ROUNDS} rounds"
    )
    for name, values in paced_samples.items():
        print(f"  {name:<24} ticker lateness {_spread([v.stall for v in values], 1000, 'ms')}")
        longest = [v.callback for v in values]
        print(f"  {'':<24} longest callback (cpu) {_spread(longest, 1000, 'ms')}")
    worst = max(v.stall for v in paced_samples["paced, journal"]) * 1000
    longest_cpu = max(v.callback for v in paced_samples["paced, journal"]) * 1000
    verdict = "met" if longest_cpu <= 5 else "not met"
    print(
        f"TARGET loop stall <= 5 ms (paced, worst round): longest callback {longest_cpu:.2f} ms"
        f" cpu ({verdict}); ticker lateness {worst:.2f} ms wall"
    )


def _fill(path: Path, count: int) -> None:
    """``count`` finished sessions written straight into the sessions table (layout 3)."""
    asyncio.run(_create(path))
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
            " INSERT INTO sessions (session_id, records, started_at, updated_at, finished,"
            " stop_reason, prompt, agents) SELECT lower(hex(randomblob(16))), 9,"
            " 1.7e9 + i * 0.37, 1.7e9 + i * 0.37 + 2.5, i % 7 != 0,"
            " CASE WHEN i % 7 != 0 THEN 'final_output' END,"
            " 'Why was I charged twice for invoice A-' || i || '?', '[\"triage\",\"billing\"]'"
            " FROM n",
            (count,),
        )
    conn.close()


async def _create(path: Path) -> None:
    with SQLiteJournal(path) as journal:
        await journal.next_seq("warm-up")


def _list_api(path: Path) -> tuple[float, float]:
    async def listing() -> tuple[float, float]:
        with SQLiteJournal(path, read_only=True) as journal:
            started, cpu = time.perf_counter(), time.process_time()
            await journal.sessions()
            return time.perf_counter() - started, time.process_time() - cpu

    return asyncio.run(listing())


def _list_cli(path: Path) -> tuple[float, float]:
    out = io.StringIO()
    started, cpu = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(out):
        code = cli_main(["sessions", "--journal", str(path)])
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert code == 0 and out.getvalue().count("\n") >= 100, out.getvalue()[:200]
    return elapsed, cpu


def listing() -> None:
    """Row (c): journal.sessions() and the CLI over 20k and 100k sessions."""
    print(f"(c) listing sessions, {LISTINGS} interleaved repeats")
    with tempfile.TemporaryDirectory() as folder:
        for count in LISTED:
            path = Path(folder) / f"listed-{count}.db"
            _fill(path, count)
            api, cli = [], []
            for _ in range(LISTINGS):
                api.append(_list_api(path))
                cli.append(_list_cli(path))
            for label, values in (("journal.sessions()", api), ("swarmkit sessions ", cli)):
                print(f"  {count:>7} sessions  {label} wall {_spread([v[0] for v in values])}")
                print(f"  {'':>7}           {'':<18} cpu  {_spread([v[1] for v in values])}")
            if count == max(LISTED):
                medians = [statistics.median(v[1] for v in values) for values in (api, cli)]
                verdict = "met" if max(medians) <= 0.2 else "not met"
                print(
                    f"TARGET listing {count} sessions <= 0.2 s: api {medians[0]:.3f} s, "
                    f"cli {medians[1]:.3f} s cpu ({verdict})"
                )


if __name__ == "__main__":
    print(f"swarmkit from {Path(swarmkit.__file__).parent}")
    concurrency()
    listing()
