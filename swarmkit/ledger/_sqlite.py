"""A ledger in one SQLite file that many processes share: each step is a BEGIN IMMEDIATE."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

from swarmkit.exceptions import LedgerError
from swarmkit.journal._sqlite_file import enable_wal
from swarmkit.ledger._store import CALL_COLUMNS, SCHEMA, CallRecord, Hold, Refusal

_HELD = "SELECT COALESCE(SUM(amount), 0) FROM swarmkit_ledger_holds WHERE key = ? AND expires > ?"


class SQLiteLedgerStore:
    """Spend in one SQLite file (WAL); reservations serialise on the file's write lock."""

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 30.0) -> None:
        self.path = Path(path)
        """The database file."""
        self._busy = busy_timeout
        self._conns: dict[tuple[int, int], sqlite3.Connection] = {}

    def _db(self) -> sqlite3.Connection:
        # One connection per process and thread: SQLite's objects stay in their thread, and
        # a forked child must not share its parent's.
        where = (os.getpid(), threading.get_ident())
        conn = self._conns.get(where)
        if conn is None:
            try:
                conn = sqlite3.connect(self.path, timeout=self._busy, isolation_level=None)
                enable_wal(conn, self._busy)  # several processes may open a new file at once
                conn.execute("PRAGMA synchronous=NORMAL")
                for statement in SCHEMA:
                    conn.execute(statement)
            except sqlite3.Error as exc:
                raise LedgerError(f"cannot open the ledger {self.path}: {exc}") from exc
            self._conns[where] = conn
        return conn

    def _write(self, work: Any) -> Any:
        db = self._db()
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                result = work(db)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise LedgerError(f"the ledger {self.path} failed: {exc}") from exc
        return result

    async def save_budgets(self, specs: dict[str, str]) -> None:
        """Record the budgets' definitions."""
        rows = list(specs.items())
        self._write(
            lambda db: db.executemany(
                "INSERT OR REPLACE INTO swarmkit_ledger_budgets (name, spec) VALUES (?, ?)", rows
            )
        )

    async def reserve(
        self, reservation: str, holds: list[Hold], *, now: float, expires: float
    ) -> Refusal | None:
        """Hold every amount, or none (the file's write lock makes it one step)."""

        def work(db: sqlite3.Connection) -> Refusal | None:
            db.executemany(
                "INSERT OR IGNORE INTO swarmkit_ledger_windows (key, budget, scope, period) "
                "VALUES (?, ?, ?, ?)",
                [(h.key, h.budget, h.scope, h.period) for h in holds],
            )
            for hold in holds:
                row = db.execute(
                    "SELECT spent FROM swarmkit_ledger_windows WHERE key = ?", (hold.key,)
                ).fetchone()
                spent = float(row[0]) if row else 0.0
                held = float(db.execute(_HELD, (hold.key, now)).fetchone()[0])
                if spent + held + hold.amount > hold.limit:
                    return Refusal(hold=hold, spent=spent, held=held)
            db.executemany(
                "INSERT INTO swarmkit_ledger_holds (reservation, key, amount, expires) "
                "VALUES (?, ?, ?, ?)",
                [(reservation, h.key, h.amount, expires) for h in holds],
            )
            return None

        result: Refusal | None = self._write(work)
        return result

    async def settle(
        self, reservation: str, charges: list[tuple[Hold, float]], call: CallRecord
    ) -> bool:
        """Charge once: the call's row is the settlement's proof."""
        marks = ", ".join("?" for _ in CALL_COLUMNS)

        def work(db: sqlite3.Connection) -> bool:
            added = db.execute(
                f"INSERT OR IGNORE INTO swarmkit_ledger_calls ({', '.join(CALL_COLUMNS)}) "
                f"VALUES ({marks})",
                call.row(),
            ).rowcount
            if not added:
                return False
            for hold, amount in charges:
                db.execute(
                    "INSERT INTO swarmkit_ledger_windows (key, budget, scope, period, spent) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET spent = spent + ?",
                    (hold.key, hold.budget, hold.scope, hold.period, amount, amount),
                )
            db.execute("DELETE FROM swarmkit_ledger_holds WHERE reservation = ?", (reservation,))
            return True

        result: bool = self._write(work)
        return result

    async def windows(self, *, now: float) -> list[dict[str, Any]]:
        """Every window with its settled spend and unexpired holds."""
        rows = self._db().execute(
            "SELECT w.key, w.budget, w.scope, w.period, w.spent, COALESCE(SUM(h.amount), 0) "
            "FROM swarmkit_ledger_windows w LEFT JOIN swarmkit_ledger_holds h "
            "ON h.key = w.key AND h.expires > ? GROUP BY w.key ORDER BY w.key",
            (now,),
        )
        names = ("key", "budget", "scope", "period", "spent", "held")
        return [dict(zip(names, row, strict=True)) for row in rows]

    async def calls(self) -> list[CallRecord]:
        """Every settled call, oldest first."""
        rows = self._db().execute(
            f"SELECT {', '.join(CALL_COLUMNS)} FROM swarmkit_ledger_calls ORDER BY at"
        )
        return [CallRecord(**dict(zip(CALL_COLUMNS, row, strict=True))) for row in rows]

    async def budgets(self) -> dict[str, str]:
        """The recorded budgets' definitions."""
        rows = self._db().execute("SELECT name, spec FROM swarmkit_ledger_budgets ORDER BY name")
        return {str(name): str(spec) for name, spec in rows}

    async def aclose(self) -> None:
        """Close this thread's connection (the others close with their threads' objects)."""
        conn = self._conns.pop((os.getpid(), threading.get_ident()), None)
        if conn is not None:
            conn.close()
