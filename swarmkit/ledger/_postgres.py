"""A ledger in Postgres for many workers: a reservation locks its budgets' rows (in key order)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from swarmkit.exceptions import LedgerError
from swarmkit.ledger._store import CALL_COLUMNS, SCHEMA, CallRecord, Hold, Refusal

T = TypeVar("T")


_RESERVE = """
CREATE OR REPLACE FUNCTION swarmkit_ledger_reserve(
    p_reservation text, p_keys text[], p_budgets text[], p_scopes text[], p_periods text[],
    p_limits float8[], p_amounts float8[], p_now float8, p_expires float8)
RETURNS TABLE (refused_key text, refused_spent float8, refused_held float8)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    i int;
    v_spent float8;
    v_held float8;
BEGIN
    INSERT INTO swarmkit_ledger_windows (key, budget, scope, period)
        SELECT * FROM unnest(p_keys, p_budgets, p_scopes, p_periods)
        ON CONFLICT (key) DO NOTHING;
    -- The rows in key order, so two reservations never wait on each other in a circle.
    PERFORM 1 FROM swarmkit_ledger_windows w WHERE w.key = ANY(p_keys)
        ORDER BY w.key FOR UPDATE;
    -- Each statement below takes a fresh snapshot (read committed, volatile function): it
    -- sees the holds of every reservation this one waited for.
    FOR i IN 1 .. array_length(p_keys, 1) LOOP
        SELECT w.spent INTO v_spent FROM swarmkit_ledger_windows w WHERE w.key = p_keys[i];
        SELECT COALESCE(SUM(h.amount), 0) INTO v_held FROM swarmkit_ledger_holds h
            WHERE h.key = p_keys[i] AND h.expires > p_now;
        IF v_spent + v_held + p_amounts[i] > p_limits[i] THEN
            refused_key := p_keys[i];
            refused_spent := v_spent;
            refused_held := v_held;
            RETURN NEXT;
            RETURN;
        END IF;
    END LOOP;
    INSERT INTO swarmkit_ledger_holds (reservation, key, amount, expires)
        SELECT p_reservation, t.k, t.a, p_expires FROM unnest(p_keys, p_amounts) AS t(k, a);
END
$$
"""
"""The reservation as one server-side function: one round trip under load, not five."""


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
                        for statement in (*SCHEMA, _RESERVE):
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
        """Lock the budgets' rows, check every hold fits, then hold them all: one call of
        ``swarmkit_ledger_reserve`` (one round trip, one transaction)."""
        ordered = sorted(holds, key=lambda h: h.key)

        async def work(conn: Any) -> Refusal | None:
            cur = await conn.execute(
                "SELECT * FROM swarmkit_ledger_reserve(%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (
                    reservation,
                    [h.key for h in ordered],
                    [h.budget for h in ordered],
                    [h.scope for h in ordered],
                    [h.period for h in ordered],
                    [h.limit for h in ordered],
                    [h.amount for h in ordered],
                    now,
                    expires,
                ),
            )
            row = await cur.fetchone()
            if row is None:
                return None
            hold = next(h for h in ordered if h.key == row[0])
            return Refusal(hold=hold, spent=float(row[1]), held=float(row[2]))

        return await self._use(work, atomic=False)

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
