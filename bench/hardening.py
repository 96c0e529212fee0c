"""What issue 33's hardening costs, measured side by side in one run, as ratios.

Rows:
- argument checks: a tool's arguments validated with the depth/size pre-scan
  (``swarmkit.bounds``) against ``json.loads`` plus Pydantic alone, for small and 100 KB
  arguments;
- encryption at rest: a 50-turn tool session into an SQLite journal with an AES-GCM cipher
  against the same journal without one, interleaved in rounds, medians compared; and reading
  the session back.
Run: ``.venv/bin/python bench/hardening.py``.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _size import size
from pydantic import BaseModel

from swarmkit import Agent, Swarm, tool
from swarmkit.bounds import json_problem
from swarmkit.journal import AESGCMCipher, SQLiteJournal
from swarmkit.testing import ScriptedModel, text, tool_call

ROUNDS = size(7)
TURNS = size(50, 2)


class Order(BaseModel):
    """Arguments of a typical tool."""

    order_id: str
    lines: list[dict[str, int]]
    note: str


def _arguments(lines: int) -> str:
    return json.dumps(
        {"order_id": "A-1", "lines": [{"qty": i, "sku": i * 7} for i in range(lines)], "note": "x"}
    )


def _per_call(work: Callable[[], object], repeat: int) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        work()
    return (time.perf_counter() - started) / repeat


def _argument_rows() -> None:
    for label, text_ in (("small", _arguments(3)), ("100 KB", _arguments(4_000))):
        repeat = 20_000 if label == "small" else 200

        def plain(text_: str = text_) -> object:
            return Order.model_validate(json.loads(text_))

        def bounded(text_: str = text_) -> object:
            assert json_problem(text_) is None
            return Order.model_validate(json.loads(text_))

        base = statistics.median(_per_call(plain, repeat) for _ in range(ROUNDS))
        checked = statistics.median(_per_call(bounded, repeat) for _ in range(ROUNDS))
        print(
            f"argument check, {label:>6} ({len(text_):,} chars): {checked * 1e6:8.1f} us vs "
            f"{base * 1e6:8.1f} us plain = x{checked / base:.2f}"
        )


@tool
def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: shipped, card ending 4242"


async def _session(journal: SQLiteJournal, session_id: str) -> float:
    turns = [tool_call("lookup", order=f"A-{i}") for i in range(TURNS)]
    swarm = Swarm([Agent(name="a", tools=[lookup])], "a", model=ScriptedModel(*turns, text("done")))
    started = time.perf_counter()
    await swarm.run("look them up", session_id=session_id, journal=journal)
    return time.perf_counter() - started


async def _encryption_rows(folder: Path) -> None:
    cipher = AESGCMCipher({"k1": bytes(range(32))})
    plain_times: list[float] = []
    sealed_times: list[float] = []
    plain_reads: list[float] = []
    sealed_reads: list[float] = []
    with (
        SQLiteJournal(folder / "plain.db") as plain,
        SQLiteJournal(folder / "sealed.db", cipher=cipher) as sealed,
    ):
        for round_ in range(ROUNDS):
            plain_times.append(await _session(plain, f"s{round_}"))
            sealed_times.append(await _session(sealed, f"s{round_}"))
            for journal, reads in ((plain, plain_reads), (sealed, sealed_reads)):
                started = time.perf_counter()
                await journal.read(f"s{round_}")
                reads.append(time.perf_counter() - started)
    run_plain, run_sealed = statistics.median(plain_times), statistics.median(sealed_times)
    read_plain, read_sealed = statistics.median(plain_reads), statistics.median(sealed_reads)
    print(
        f"{TURNS}-turn session into SQLite: {run_sealed * 1e3:7.1f} ms encrypted vs "
        f"{run_plain * 1e3:7.1f} ms plain = x{run_sealed / run_plain:.2f}"
    )
    print(
        f"reading it back:           {read_sealed * 1e3:7.2f} ms encrypted vs "
        f"{read_plain * 1e3:7.2f} ms plain = x{read_sealed / read_plain:.2f}"
    )


def main() -> None:
    """Print each row."""
    _argument_rows()
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(_encryption_rows(Path(folder)))


if __name__ == "__main__":
    main()
