"""What a ledger store keeps and the one protocol its SQLite and Postgres stores share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS swarmkit_ledger_budgets (
        name TEXT PRIMARY KEY, spec TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS swarmkit_ledger_windows (
        key TEXT PRIMARY KEY, budget TEXT NOT NULL, scope TEXT NOT NULL,
        period TEXT NOT NULL, spent DOUBLE PRECISION NOT NULL DEFAULT 0)""",
    """CREATE TABLE IF NOT EXISTS swarmkit_ledger_holds (
        reservation TEXT NOT NULL, key TEXT NOT NULL, amount DOUBLE PRECISION NOT NULL,
        expires DOUBLE PRECISION NOT NULL, PRIMARY KEY (reservation, key))""",
    "CREATE INDEX IF NOT EXISTS swarmkit_ledger_holds_key ON swarmkit_ledger_holds (key, expires)",
    """CREATE TABLE IF NOT EXISTS swarmkit_ledger_calls (
        reservation TEXT PRIMARY KEY, at DOUBLE PRECISION NOT NULL, day TEXT NOT NULL,
        session_id TEXT NOT NULL, tenant TEXT NOT NULL, agent TEXT NOT NULL,
        model TEXT NOT NULL, provider TEXT NOT NULL, calls INTEGER NOT NULL,
        input_tokens BIGINT NOT NULL, output_tokens BIGINT NOT NULL,
        total_tokens BIGINT NOT NULL, cost DOUBLE PRECISION NOT NULL)""",
)
"""The ledger's tables (the same text on SQLite and Postgres)."""

CALL_COLUMNS = (
    "reservation",
    "at",
    "day",
    "session_id",
    "tenant",
    "agent",
    "model",
    "provider",
    "calls",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "cost",
)
"""The columns of one settled call, in ``CallRecord.row()`` order."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Hold:
    """One budget's share of a reservation: its window, its limit, the estimate held."""

    key: str
    """The budget's window row: ``name|scope|period``."""
    budget: str
    """The budget's name."""
    scope: str
    """The values of its ``"*"`` keys (empty for a shared budget)."""
    period: str
    """The period the call falls in."""
    limit: float
    """The budget's limit."""
    amount: float
    """The estimate held against it, in the budget's unit."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Refusal:
    """The budget a reservation did not fit in, with its figures."""

    hold: Hold
    """The hold that did not fit."""
    spent: float
    """Settled spend in its period."""
    held: float
    """Other calls' unexpired reservations."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CallRecord:
    """One settled call, as ``swarmkit spend`` reports it."""

    reservation: str
    at: float
    day: str
    session_id: str
    tenant: str
    agent: str
    model: str
    provider: str
    calls: int
    input_tokens: int
    output_tokens: int
    total_tokens: int
    cost: float

    def row(self) -> tuple[Any, ...]:
        """Its values in ``CALL_COLUMNS`` order."""
        return tuple(getattr(self, name) for name in CALL_COLUMNS)


class LedgerStore(Protocol):
    """Where a ledger keeps spend: atomic across the processes sharing it."""

    async def save_budgets(self, specs: dict[str, str]) -> None:
        """Record the budgets' definitions (name -> JSON) for reports."""
        ...

    async def reserve(
        self, reservation: str, holds: list[Hold], *, now: float, expires: float
    ) -> Refusal | None:
        """Hold every amount in one atomic step, or none and say which budget refused."""
        ...

    async def settle(
        self, reservation: str, charges: list[tuple[Hold, float]], call: CallRecord
    ) -> bool:
        """Charge the real amounts and drop the holds, once (False: settled already)."""
        ...

    async def windows(self, *, now: float) -> list[dict[str, Any]]:
        """Every budget window: key, budget, scope, period, spent, held (unexpired)."""
        ...

    async def calls(self) -> list[CallRecord]:
        """Every settled call."""
        ...

    async def budgets(self) -> dict[str, str]:
        """The recorded budgets' definitions."""
        ...

    async def aclose(self) -> None:
        """Close connections."""
        ...
