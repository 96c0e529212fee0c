"""A shop swarm whose ``pay`` effect reaches a payments ledger (a SQLite file that counts).

Run as ``python -m tests.effects.payments_app JOURNAL LEDGER``: the child pays, prints
``paid``, then blocks before the result is journaled, so the parent can SIGKILL it there.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

from swarmkit import Agent, RunContext, Swarm, tool
from swarmkit.effects import Happened, NotDone, Reconcile
from swarmkit.journal import SQLiteJournal
from swarmkit.testing import ScriptedModel, text, tool_call

SESSION = "pay-1"


def charge(ledger: Path, key: str, order: str) -> None:
    """The payment provider: one committed row per payment received."""
    with sqlite3.connect(ledger) as db:
        db.execute("CREATE TABLE IF NOT EXISTS paid (key TEXT, order_id TEXT)")
        db.execute("INSERT INTO paid VALUES (?, ?)", (key, order))


def payments(ledger: Path) -> list[tuple[str, str]]:
    """Every payment the provider received."""
    with sqlite3.connect(ledger) as db:
        db.execute("CREATE TABLE IF NOT EXISTS paid (key TEXT, order_id TEXT)")
        return list(db.execute("SELECT key, order_id FROM paid"))


def looked_up(ledger: Path) -> Reconcile:
    """A reconcile function: asks the provider whether the payment with this key went through."""

    def reconcile(key: str, arguments: dict[str, object]) -> Happened | NotDone:
        found = [order for k, order in payments(ledger) if k == key]
        return Happened(result=f"paid {found[0]}") if found else NotDone()

    return reconcile


def build_swarm(
    ledger: Path, *, reconcile: Reconcile | None, after: Callable[[], None] = lambda: None
) -> Swarm:
    """One agent that pays an order, then answers."""

    @tool(effect=True, reconcile=reconcile)
    def pay(order: str, context: RunContext) -> str:
        """Pay an order."""
        charge(ledger, str(context.idempotency_key), order)
        after()
        return f"paid {order}"

    model = ScriptedModel(tool_call("pay", order="o-1"), text("done"))
    return Swarm([Agent(name="shop", tools=[pay])], "shop", model=model)


def _hang() -> None:
    print("paid", flush=True)
    sys.stdin.readline()  # blocks until the parent kills this process


if __name__ == "__main__":
    journal, ledger = sys.argv[1], Path(sys.argv[2])
    swarm = build_swarm(ledger, reconcile=None, after=_hang)
    asyncio.run(swarm.run("pay o-1", session_id=SESSION, journal=SQLiteJournal(journal)))
