"""A ledger in Postgres for many workers: a reservation locks its budgets' rows (in key order)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from swarmkit.exceptions import LedgerError
from swarmkit.ledger._store import CALL_COLUMNS, SCHEMA, CallRecord, Hold, Refusal

T = TypeVar("T")


async def _locked(conn: Any, keys: list[str], now: float) -> dict[str, tuple[float, float]]:
    """The windows' rows, locked in key order: settled spend and unexpired holds of each."""
    cur = await conn.execute(
        "SELECT w.key, w.spent, COALESCE((SELECT SUM(h.amount) FROM swarmkit_ledger_holds h "
        "WHERE h.key = w.key AND h.expires > %s), 0) FROM swarmkit_ledger_windows w "
        "WHERE w.key = ANY(%s) ORDER BY w.key FOR UPDATE OF w",
        (now, keys),
    )
    return {key: (float(spent), float(held)) for key, spent, held in await cur.fetchall()}


class PostgresLedgerStore:
    """Spend in a Postgres database (a DSN, as ``PostgresJournal`` takes); one connection per
    event loop, each step one transaction."""

    def __init__(self, dsn: str, *, connect_timeout: float = 10.0) -> None:
        self._dsn = dsn
        self._timeout = connect_timeout
        self._conns: dict[int, tuple[Any, asyncio.Lock]] = {}
        self._ready = False

    async def _use(self, work: Callable[[Any], Awaitable[T]], *, atomic: bool = True) -> T:
        import psycopg  # noqa: PLC0415 - the postgres extra, on first use

        loop = id(asyncio.get_running_loop())
        try:
            if loop not in self._conns:
                conn = await psycopg.AsyncConnection.connect(
                    self._dsn, connect_timeout=int(self._timeout), autocommit=True
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
                if not atomic:  # one statement: atomic by itself
                    return await work(conn)
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
            found = await _locked(conn, keys, now)
            if len(found) < len(keys):
                # A period's first call makes its row; a concurrent first call waits on it.
                await conn.execute(
                    "INSERT INTO swarmkit_ledger_windows (key, budget, scope, period) "
                    "SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[]) "
                    "ON CONFLICT (key) DO NOTHING",
                    (
                        keys,
                        [h.budget for h in ordered],
                        [h.scope for h in ordered],
                        [h.period for h in ordered],
                    ),
                )
                found = await _locked(conn, keys, now)
            for hold in ordered:
                spent, held = found[hold.key]
                if spent + held + hold.amount > hold.limit:
                    return Refusal(hold=hold, spent=spent, held=held)
            await conn.execute(
                "INSERT INTO swarmkit_ledger_holds (reservation, key, amount, expires) "
                "SELECT %s, k, a, %s FROM unnest(%s::text[], %s::float8[]) AS t(k, a)",
                (reservation, expires, keys, [h.amount for h in ordered]),
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
            # One statement: the call's row proves the settlement, so a second one charges
            # nothing; the windows are updated in key order (as reservations lock them).
            cur = await conn.execute(
                f"WITH c AS (INSERT INTO swarmkit_ledger_calls ({', '.join(CALL_COLUMNS)}) "
                f"VALUES ({marks}) ON CONFLICT (reservation) DO NOTHING RETURNING 1), "
                "w AS (INSERT INTO swarmkit_ledger_windows (key, budget, scope, period, spent) "
                "SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], "
                "%s::float8[]) WHERE EXISTS (SELECT 1 FROM c) ON CONFLICT (key) DO UPDATE "
                "SET spent = swarmkit_ledger_windows.spent + EXCLUDED.spent), "
                "d AS (DELETE FROM swarmkit_ledger_holds WHERE reservation = %s) "
                "SELECT count(*) FROM c",
                (
                    *call.row(),
                    [h.key for h, _ in ordered],
                    [h.budget for h, _ in ordered],
                    [h.scope for h, _ in ordered],
                    [h.period for h, _ in ordered],
                    [amount for _, amount in ordered],
                    reservation,
                ),
            )
            row = await cur.fetchone()
            return bool(row and row[0])

        return await self._use(work, atomic=False)

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
