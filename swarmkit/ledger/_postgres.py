"""A ledger in Postgres for many workers: a reservation locks its budgets' rows (in key order)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from swarmkit.exceptions import LedgerError
from swarmkit.ledger._store import CALL_COLUMNS, SCHEMA, CallRecord, Hold, Refusal

T = TypeVar("T")


class PostgresLedgerStore:
    """Spend in a Postgres database (a DSN, as ``PostgresJournal`` takes); one connection per
    event loop, each step one transaction."""

    def __init__(self, dsn: str, *, connect_timeout: float = 10.0) -> None:
        self._dsn = dsn
        self._timeout = connect_timeout
        self._conns: dict[int, tuple[Any, asyncio.Lock]] = {}
        self._ready = False

    async def _use(self, work: Callable[[Any], Awaitable[T]]) -> T:
        import psycopg  # noqa: PLC0415 - the postgres extra, on first use

        loop = id(asyncio.get_running_loop())
        try:
            if loop not in self._conns:
                conn = await psycopg.AsyncConnection.connect(
                    self._dsn, connect_timeout=int(self._timeout)
                )
                self._conns[loop] = (conn, asyncio.Lock())
            conn, lock = self._conns[loop]
            async with lock:
                if not self._ready:
                    async with conn.transaction():
                        await conn.execute("SELECT pg_advisory_xact_lock(4404)")
                        for statement in SCHEMA:
                            await conn.execute(statement)
                    self._ready = True
                async with conn.transaction():
                    return await work(conn)
        except psycopg.Error as exc:
            raise LedgerError(f"the Postgres ledger failed: {exc}") from exc

    async def save_budgets(self, specs: dict[str, str]) -> None:
        """Record the budgets' definitions."""

        async def work(conn: Any) -> None:
            async with conn.cursor() as cur:
                await cur.executemany(
                    "INSERT INTO swarmkit_ledger_budgets (name, spec) VALUES (%s, %s) "
                    "ON CONFLICT (name) DO UPDATE SET spec = EXCLUDED.spec",
                    list(specs.items()),
                )

        await self._use(work)

    async def reserve(
        self, reservation: str, holds: list[Hold], *, now: float, expires: float
    ) -> Refusal | None:
        """Lock the budgets' rows, check every hold fits, then hold them all."""
        ordered = sorted(holds, key=lambda h: h.key)
        keys = [h.key for h in ordered]

        async def work(conn: Any) -> Refusal | None:
            async with conn.cursor() as cur:
                await cur.executemany(
                    "INSERT INTO swarmkit_ledger_windows (key, budget, scope, period) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT (key) DO NOTHING",
                    [(h.key, h.budget, h.scope, h.period) for h in ordered],
                )
                await cur.execute(
                    "SELECT key, spent FROM swarmkit_ledger_windows WHERE key = ANY(%s) "
                    "ORDER BY key FOR UPDATE",
                    (keys,),
                )
                spent = {key: float(value) for key, value in await cur.fetchall()}
                await cur.execute(
                    "SELECT key, SUM(amount) FROM swarmkit_ledger_holds "
                    "WHERE key = ANY(%s) AND expires > %s GROUP BY key",
                    (keys, now),
                )
                held = {key: float(value) for key, value in await cur.fetchall()}
                for hold in ordered:
                    used = spent.get(hold.key, 0.0) + held.get(hold.key, 0.0)
                    if used + hold.amount > hold.limit:
                        return Refusal(
                            hold=hold, spent=spent.get(hold.key, 0.0), held=held.get(hold.key, 0.0)
                        )
                await cur.executemany(
                    "INSERT INTO swarmkit_ledger_holds (reservation, key, amount, expires) "
                    "VALUES (%s, %s, %s, %s)",
                    [(reservation, h.key, h.amount, expires) for h in ordered],
                )
            return None

        return await self._use(work)

    async def settle(
        self, reservation: str, charges: list[tuple[Hold, float]], call: CallRecord
    ) -> bool:
        """Charge once (the call's row proves it), in key order, and drop the holds."""
        marks = ", ".join("%s" for _ in CALL_COLUMNS)
        ordered = sorted(charges, key=lambda c: c[0].key)

        async def work(conn: Any) -> bool:
            async with conn.cursor() as cur:
                await cur.execute(
                    f"INSERT INTO swarmkit_ledger_calls ({', '.join(CALL_COLUMNS)}) "
                    f"VALUES ({marks}) ON CONFLICT (reservation) DO NOTHING",
                    call.row(),
                )
                if cur.rowcount != 1:
                    return False
                await cur.executemany(
                    "INSERT INTO swarmkit_ledger_windows (key, budget, scope, period, spent) "
                    "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (key) DO UPDATE "
                    "SET spent = swarmkit_ledger_windows.spent + EXCLUDED.spent",
                    [(h.key, h.budget, h.scope, h.period, amount) for h, amount in ordered],
                )
                await cur.execute(
                    "DELETE FROM swarmkit_ledger_holds WHERE reservation = %s", (reservation,)
                )
            return True

        return await self._use(work)

    async def windows(self, *, now: float) -> list[dict[str, Any]]:
        """Every window with its settled spend and unexpired holds."""

        async def work(conn: Any) -> list[dict[str, Any]]:
            cur = await conn.execute(
                "SELECT w.key, w.budget, w.scope, w.period, w.spent, "
                "COALESCE(SUM(h.amount), 0) FROM swarmkit_ledger_windows w "
                "LEFT JOIN swarmkit_ledger_holds h ON h.key = w.key AND h.expires > %s "
                "GROUP BY w.key ORDER BY w.key",
                (now,),
            )
            names = ("key", "budget", "scope", "period", "spent", "held")
            return [dict(zip(names, row, strict=True)) for row in await cur.fetchall()]

        return await self._use(work)

    async def calls(self) -> list[CallRecord]:
        """Every settled call, oldest first."""

        async def work(conn: Any) -> list[CallRecord]:
            cur = await conn.execute(
                f"SELECT {', '.join(CALL_COLUMNS)} FROM swarmkit_ledger_calls ORDER BY at"
            )
            rows = await cur.fetchall()
            return [CallRecord(**dict(zip(CALL_COLUMNS, row, strict=True))) for row in rows]

        return await self._use(work)

    async def budgets(self) -> dict[str, str]:
        """The recorded budgets' definitions."""

        async def work(conn: Any) -> dict[str, str]:
            cur = await conn.execute("SELECT name, spec FROM swarmkit_ledger_budgets")
            return {str(name): str(spec) for name, spec in await cur.fetchall()}

        return await self._use(work)

    async def aclose(self) -> None:
        """Close every connection this store opened."""
        conns, self._conns = list(self._conns.values()), {}
        for conn, _ in conns:
            await conn.close()
