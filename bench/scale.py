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
from typing import Any

import swarmkit
from swarmkit import Agent, RunResult, Swarm
from swarmkit.cli import main as cli_main
from swarmkit.journal import SQLiteJournal
from swarmkit.messages import AssistantMessage, ToolCall
from swarmkit.models import ModelRequest, ModelResponse, Usage

SESSIONS = 1_000
ROUNDS = 5
PACED_ROUNDS = 3
LISTED = (20_000, 100_000)
LISTINGS = 5
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
    """Wakes every TICK seconds and keeps the worst lateness of a wake-up."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Ticker:
        self._task = asyncio.create_task(self._tick())
        await asyncio.sleep(0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _tick(self) -> None:
        while True:
            due = time.perf_counter() + TICK
            await asyncio.sleep(TICK)
            self.worst = max(self.worst, time.perf_counter() - due)


Contender = Callable[[Path], Coroutine[Any, Any, tuple[float, float]]]
"""Runs the sessions with a journal in the given folder; (seconds, worst stall)."""


def _many(
    *,
    concurrent: bool,
    journaled: bool,
    latency: Callable[[], float],
    arrivals: Callable[[], float] = lambda: 0.0,
) -> Contender:
    async def contender(folder: Path) -> tuple[float, float]:
        swarm = _swarm(latency)
        with SQLiteJournal(folder / "scale.db") as journal:
            await swarm.run("warm up", journal=journal if journaled else None)

            async def session(delay: float) -> RunResult:
                if delay:
                    await asyncio.sleep(delay)
                return await swarm.run(PROMPT, journal=journal if journaled else None)

            sessions = [session(arrivals()) for _ in range(SESSIONS)]
            async with Ticker() as ticker:
                started = time.perf_counter()
                if concurrent:
                    results = await asyncio.gather(*sessions)
                else:
                    results = [await session for session in sessions]
                elapsed = time.perf_counter() - started
            if journaled:
                listed = await journal.sessions()
                assert len(listed) == SESSIONS + 1, len(listed)
        assert all(r.stop_reason == "final_output" for r in results)
        return elapsed, ticker.worst

    return contender


def _spread(values: list[float], scale: float = 1.0, unit: str = "s") -> str:
    low, mid, high = min(values) * scale, statistics.median(values) * scale, max(values) * scale
    return f"min {low:.3f} / median {mid:.3f} / max {high:.3f} {unit}"


def _rounds(contenders: dict[str, Contender], rounds: int) -> dict[str, list[tuple[float, float]]]:
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
    for number in range(rounds):
        order = list(contenders.items())
        if number % 2:
            order.reverse()
        for name, contender in order:
            with tempfile.TemporaryDirectory() as folder:
                samples[name].append(asyncio.run(contender(Path(folder))))
    return samples


def concurrency() -> None:
    """Rows (a) and (b): throughput, ratio and loop stalls."""
    yielding = _many(concurrent=True, journaled=True, latency=lambda: 0.0)
    contenders = {
        "concurrent, journal": yielding,
        "sequential, journal": _many(concurrent=False, journaled=True, latency=lambda: 0.0),
        "concurrent, no journal": _many(concurrent=True, journaled=False, latency=lambda: 0.0),
        "sequential, no journal": _many(concurrent=False, journaled=False, latency=lambda: 0.0),
    }
    samples = _rounds(contenders, ROUNDS)
    print(f"(a) {SESSIONS} two-call handoff sessions, {ROUNDS} interleaved rounds")
    for name, values in samples.items():
        print(f"  {name:<24} {_spread([v[0] for v in values])}")
        print(f"  {'':<24} loop stall {_spread([v[1] for v in values], 1000, 'ms')}")
    ratios = [
        c[0] / s[0]
        for c, s in zip(samples["concurrent, journal"], samples["sequential, journal"], strict=True)
    ]
    floor = [
        c[0] / n[0]
        for c, n in zip(
            samples["concurrent, journal"], samples["concurrent, no journal"], strict=True
        )
    ]
    print(f"  concurrent/sequential (journal): {_spread(ratios, unit='x')}")
    print(f"  concurrent journal/no journal:   {_spread(floor, unit='x')}")
    alone = [
        (j[0] - n[0]) / SESSIONS * 1e6
        for j, n in zip(
            samples["sequential, journal"], samples["sequential, no journal"], strict=True
        )
    ]
    print(f"  journal cost of one session run alone: {_spread(alone, unit='us')}")
    ratio = statistics.median(ratios)
    verdict = "met" if ratio <= 1.3 else "not met"
    print(f"TARGET concurrent vs sequential <= 1.3x: {ratio:.2f}x ({verdict})")

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
        print(f"  {name:<24} loop stall {_spread([v[1] for v in values], 1000, 'ms')}")
    worst = max(v[1] for v in paced_samples["paced, journal"]) * 1000
    verdict = "met" if worst <= 5 else "not met"
    print(
        f"TARGET loop stall with the journal <= 5 ms (paced, worst round): {worst:.2f} ms"
        f" ({verdict})"
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


def _list_api(path: Path) -> float:
    async def listing() -> float:
        with SQLiteJournal(path, read_only=True) as journal:
            started = time.perf_counter()
            await journal.sessions()
            return time.perf_counter() - started

    return asyncio.run(listing())


def _list_cli(path: Path) -> float:
    out = io.StringIO()
    started = time.perf_counter()
    with contextlib.redirect_stdout(out):
        code = cli_main(["sessions", "--journal", str(path)])
    elapsed = time.perf_counter() - started
    assert code == 0 and out.getvalue().count("\n") >= 100, out.getvalue()[:200]
    return elapsed


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
            print(f"  {count:>7} sessions  journal.sessions() {_spread(api)}")
            print(f"  {count:>7} sessions  swarmkit sessions   {_spread(cli)}")
            if count == max(LISTED):
                worst = max(statistics.median(api), statistics.median(cli))
                verdict = "met" if worst <= 0.2 else "not met"
                print(
                    f"TARGET listing {count} sessions <= 0.2 s: api "
                    f"{statistics.median(api):.3f} s, cli {statistics.median(cli):.3f} s "
                    f"({verdict})"
                )


if __name__ == "__main__":
    print(f"swarmkit from {Path(swarmkit.__file__).parent}")
    concurrency()
    listing()
