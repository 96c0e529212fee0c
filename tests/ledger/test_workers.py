"""Budgets shared by processes: no overspend under concurrency, no leak past a killed worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from swarmkit import Budget, Ledger
from swarmkit.ledger import Refused, Reservation
from tests.ledger.ledger_worker import CALL, ledger

ROOT = Path(__file__).resolve().parents[2]


def _worker(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.ledger.ledger_worker", *args],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


async def test_concurrent_workers_never_overspend(store: str) -> None:
    """Four processes ask for 160 calls where 50 fit: exactly 50 are made and charged, and the
    spent total is the sum of the settled calls."""
    workers = [_worker("runs", store, "40", str(50 * 15)) for _ in range(4)]
    lines = [w.communicate(timeout=240)[0].split() for w in workers]
    assert all(w.returncode == 0 for w in workers)
    finished = sum(int(line[1]) for line in lines)
    stopped = sum(int(line[2]) for line in lines)

    check = ledger(store, 50 * 15)
    windows = await check.store.windows(now=time.time())
    calls = await check.store.calls()
    await check.store.aclose()
    assert (finished, stopped) == (50, 110)
    assert len(calls) == 50
    assert windows[0]["spent"] == 50 * 15 == sum(c.total_tokens for c in calls)
    assert windows[0]["held"] == 0


async def test_a_killed_worker_holds_budget_no_longer_than_the_bound(store: str) -> None:
    """SIGKILL between reserve and settle: the estimate stays held until hold_seconds pass,
    then the budget has it back; nothing is charged for the call that never finished."""
    worker = _worker("hang", store)
    assert worker.stdout is not None
    assert worker.stdout.readline().strip() == "in call"
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=30)

    now = time.time()
    facts = {"tenant": "default", "agent": "a", "model": "hanging", "provider": "_OTHER"}
    during = ledger(store, 15)
    after = Ledger(
        store,
        [Budget(name="shared", limit=15)],
        estimate=lambda _: CALL,
        clock=lambda: now + during.hold_seconds + 1,
    )
    held = [w["held"] for w in await during.store.windows(now=now)]
    refused = await during.reserve(session_id="s", facts=facts, estimate=CALL)
    fits = await after.reserve(session_id="s", facts=facts, estimate=CALL)
    calls = await during.store.calls()
    await during.store.aclose()
    await after.store.aclose()
    assert held == [15]
    assert isinstance(refused, Refused)
    assert (refused.limit, refused.spent) == (15, 15)
    assert isinstance(fits, Reservation)
    assert calls == []
