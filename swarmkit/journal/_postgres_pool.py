"""A Postgres journal's connections: its schema set up first, then one pool per event loop."""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import AsyncConnectionPool

from swarmkit.exceptions import JournalError
from swarmkit.journal import _postgres_schema as sql

_T = TypeVar("_T")
_Pool = AsyncConnectionPool[psycopg.AsyncConnection[Any]]
_IDLE = psycopg.pq.TransactionStatus.IDLE

Work = Callable[[psycopg.AsyncConnection[Any]], Awaitable[_T]]
"""One journal call's database work on a connection."""

# Pools of loops that ended are closed by their keeper task; this holds the keepers alive.
_KEEPERS: set[asyncio.Task[None]] = set()


@dataclass(frozen=True, kw_only=True, slots=True)
class _LoopPool:
    """The connection pool of one event loop, as the task that opens it."""

    opening: asyncio.Task[_Pool]
    """Opens the pool; every caller of the loop awaits the same task."""
    closing: asyncio.Event
    """Set by ``aclose()``: the pool's keeper then closes it without waiting for the loop."""
    spare: _Spare
    """The connection kept out of the pool for calls that come one at a time."""


class _Spare:
    """One connection a loop keeps checked out of its pool, for calls that come one at a time.

    A run writes its session one call after another, so most calls find it free and skip the
    pool's checkout and return; a call that finds it busy takes a pooled connection. A call
    that fails or is cancelled gives it back to the pool, which resets or replaces it.
    """

    def __init__(self) -> None:
        self.conn: psycopg.AsyncConnection[Any] | None = None
        self.busy = False

    async def use(self, pool: _Pool, work: Work[_T]) -> _T:
        """Run ``work`` on the spare connection (the caller checked it is not busy)."""
        self.busy = True
        conn = self.conn
        try:
            if conn is None:
                conn = self.conn = await pool.getconn()
            result = await work(conn)
            if conn.info.transaction_status != _IDLE:
                raise JournalError("a journal call left its connection inside a transaction")
            return result
        except BaseException:
            if conn is not None:
                self.conn = None
                with contextlib.suppress(Exception):  # the call's own error is the one to see
                    await pool.putconn(conn)
            raise
        finally:
            self.busy = False

    async def close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()


class LoopPools:
    """The connections of one journal: each event loop gets its own pool (``run_sync`` starts
    a fresh loop per call, and a connection never crosses loops), closed when the loop shuts
    down or on ``aclose()``. The first pool opens after the schema is created or migrated."""

    def __init__(
        self, dsn: str, *, where: str, max_connections: int, connect_timeout: float
    ) -> None:
        self._dsn = dsn
        self._where = where
        self._max_connections = max_connections
        self._connect_timeout = connect_timeout
        self._schema_ready = False
        self._closed = False
        self._pools: dict[asyncio.AbstractEventLoop, _LoopPool] = {}

    async def use(self, action: str, work: Work[_T]) -> _T:
        """Run ``work`` on a pooled connection; database errors become one-line JournalErrors."""
        if self._closed:
            raise JournalError(f"cannot {action} the journal at {self._where}: it is closed")
        pool, spare = await self._pool()
        try:
            # With one connection in all, a kept one would leave none for concurrent calls.
            if not spare.busy and self._max_connections > 1:
                return await spare.use(pool, work)
            async with pool.connection() as conn:
                return await work(conn)
        except psycopg.Error as exc:
            raise JournalError(
                f"cannot {action} the journal at {self._where}: {one_line(exc)}"
            ) from exc

    async def aclose(self) -> None:
        """Close the current event loop's pool; later calls raise ``JournalError``."""
        self._closed = True
        with contextlib.suppress(RuntimeError):
            entry = self._pools.pop(asyncio.get_running_loop(), None)
            if entry is not None and not entry.opening.cancelled():
                entry.closing.set()
                await entry.spare.close()  # checked out, so closing the pool would not close it
                with contextlib.suppress(Exception):
                    await (await asyncio.shield(entry.opening)).close()

    def close(self) -> None:
        """Refuse later calls; each loop's pool closes as its loop shuts down."""
        self._closed = True

    async def _pool(self) -> tuple[_Pool, _Spare]:
        loop = asyncio.get_running_loop()
        entry = self._pools.get(loop)
        if entry is None:
            # Forget the pools of loops that ended (their keepers closed them): run_sync
            # leaves one behind per call.
            for ended in [known for known in self._pools if known.is_closed()]:
                del self._pools[ended]
            closing = asyncio.Event()
            opening = loop.create_task(self._open_pool(closing))
            entry = _LoopPool(opening=opening, closing=closing, spare=_Spare())
            self._pools[loop] = entry
        try:
            return await asyncio.shield(entry.opening), entry.spare
        except BaseException:
            if entry.opening.done() and self._pools.get(loop) is entry:
                del self._pools[loop]  # the next call tries again
            raise

    async def _open_pool(self, closing: asyncio.Event) -> _Pool:
        if not self._schema_ready:
            await self._prepare_schema()
            self._schema_ready = True
        connections: weakref.WeakSet[psycopg.AsyncConnection[Any]] = weakref.WeakSet()

        async def remember(conn: psycopg.AsyncConnection[Any]) -> None:
            connections.add(conn)

        pool: _Pool = AsyncConnectionPool(
            self._dsn,
            configure=remember,
            kwargs={"autocommit": True, "connect_timeout": _whole_seconds(self._connect_timeout)},
            min_size=1,
            max_size=self._max_connections,
            open=False,
            timeout=self._connect_timeout,
            name=f"swarmkit-journal {self._where}",
        )
        try:
            await pool.open(wait=True, timeout=self._connect_timeout)
        except psycopg.Error as exc:
            await pool.close()
            raise JournalError(
                f"cannot connect to the journal at {self._where}: {one_line(exc)}"
            ) from exc
        keeper = asyncio.get_running_loop().create_task(
            _close_with_loop(pool, connections, closing)
        )
        _KEEPERS.add(keeper)
        keeper.add_done_callback(_KEEPERS.discard)
        return pool

    async def _prepare_schema(self) -> None:
        """Create the tables, migrate an older schema, or refuse a newer one."""
        conn = await self._connect()
        try:
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(%s)", (sql.MIGRATION_LOCK,))
                await _migrate(conn, self._where)
        except pg_errors.InsufficientPrivilege as exc:
            raise JournalError(
                f"the database at {self._where} has no swarmkit journal tables of schema "
                f"{sql.POSTGRES_SCHEMA_VERSION} and this user may not create them "
                f"({one_line(exc)}); connect once as a user with CREATE on the schema, or "
                "GRANT CREATE ON SCHEMA public to this user"
            ) from exc
        except psycopg.Error as exc:
            raise JournalError(
                f"cannot set up the journal at {self._where}: {one_line(exc)}"
            ) from exc
        finally:
            await conn.close()

    async def _connect(self) -> psycopg.AsyncConnection[Any]:
        try:
            return await psycopg.AsyncConnection.connect(
                self._dsn, connect_timeout=_whole_seconds(self._connect_timeout)
            )
        except psycopg.Error as exc:
            raise JournalError(
                f"cannot connect to the journal at {self._where}: {one_line(exc)}; "
                f"{_connect_hint(exc)}"
            ) from exc


async def _migrate(conn: psycopg.AsyncConnection[Any], where: str) -> None:
    exists = await (await conn.execute(sql.MIGRATIONS_EXIST)).fetchone()
    installed = 0
    if exists is not None and exists[0]:
        row = await (await conn.execute(sql.MAX_VERSION)).fetchone()
        installed = int(row[0]) if row is not None else 0
    if installed > sql.POSTGRES_SCHEMA_VERSION:
        raise JournalError(
            f"the journal at {where} has schema version {installed}, newer than this swarmkit "
            f"reads ({sql.POSTGRES_SCHEMA_VERSION}); upgrade swarmkit to use it"
        )
    if installed == sql.POSTGRES_SCHEMA_VERSION:
        return
    await conn.execute(sql.CREATE_MIGRATIONS)
    for version in range(installed + 1, sql.POSTGRES_SCHEMA_VERSION + 1):
        for statement in sql.MIGRATIONS[version]:
            await conn.execute(statement)
        await conn.execute(sql.RECORD_MIGRATION, (version,))


async def _close_with_loop(
    pool: _Pool, connections: weakref.WeakSet[psycopg.AsyncConnection[Any]], closing: asyncio.Event
) -> None:
    """Wait for ``aclose()`` or the loop's shutdown (which cancels this task), then close."""
    try:
        await closing.wait()
    finally:
        # The shutdown cancels the pool's own workers too, and pool.close() then fails waiting
        # for them before it closes anything, so each connection is closed here first.
        for conn in list(connections):
            with contextlib.suppress(Exception):
                await conn.close()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await pool.close(timeout=0.1)


def _connect_hint(exc: psycopg.Error) -> str:
    text = str(exc).lower()
    if "password" in text or "authentication" in text or "role" in text:
        return "check the user and password in the DSN"
    if "database" in text and "does not exist" in text:
        return "create the database first (createdb), or fix its name in the DSN"
    return "check the host and port in the DSN, and that the server is running"


def one_line(exc: BaseException) -> str:
    """A database error's message on one line."""
    return "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())


def _whole_seconds(seconds: float) -> int:
    # libpq takes whole seconds, and reads 0 as "wait forever".
    return max(1, round(seconds))
