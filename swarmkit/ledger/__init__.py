"""Spend ledger: budgets by tenant, agent, model and provider, checked before every model call.

A ``Ledger`` holds ``Budget`` values and a store (one SQLite file shared by processes, or
Postgres shared by workers). Before each live model call the run reserves the call's estimate
against every budget that applies, in one atomic step; after the call it settles with the real
usage. A call a budget has no room for is not made: the run stops with ``stop_reason="budget"``.
"""

from __future__ import annotations

from swarmkit.ledger._budget import EACH, Budget, Period, Price, Unit, Window
from swarmkit.ledger._ledger import (
    DEFAULT_HOLD_SECONDS,
    Estimate,
    Ledger,
    Refused,
    Reservation,
    open_store,
)
from swarmkit.ledger._postgres import PostgresLedgerStore
from swarmkit.ledger._report import GROUPS, spend_report
from swarmkit.ledger._sqlite import SQLiteLedgerStore
from swarmkit.ledger._store import CallRecord, Hold, LedgerStore, Refusal

__all__ = [
    "DEFAULT_HOLD_SECONDS",
    "EACH",
    "GROUPS",
    "Budget",
    "CallRecord",
    "Estimate",
    "Hold",
    "Ledger",
    "LedgerStore",
    "Period",
    "PostgresLedgerStore",
    "Price",
    "Refusal",
    "Refused",
    "Reservation",
    "SQLiteLedgerStore",
    "Unit",
    "Window",
    "open_store",
    "spend_report",
]
