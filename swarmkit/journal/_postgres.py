"""PostgresJournal: one journal in PostgreSQL shared by many workers (the only psycopg importer)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import AsyncConnectionPool

from swarmkit.exceptions import (
    ConfigurationError,
    JournalError,
    SessionBusyError,
    SessionNotFoundError,
)
from swarmkit.journal import _postgres_schema as sql
from swarmkit.journal._cipher import (
    JournalCipher,
    open_data,
    opened_infos,
    place,
    seal_data,
    seal_prompt,
)
from swarmkit.journal._records import (
    JournalRecord,
    SessionInfo,
    check_continues,
    check_lease_args,
    check_session_id,
    check_step,
    decode_data,
    encode_data,
    session_info,
    step_facts,
)

_T = TypeVar("_T")
_Pool = AsyncConnectionPool[psycopg.AsyncConnection[Any]]
_IDLE = psycopg.pq.TransactionStatus.IDLE

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

    async def use(
        self, pool: _Pool, work: Callable[[psycopg.AsyncConnection[Any]], Awaitable[_T]]
    ) -> _T:
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


class PostgresJournal:
    """A journal in a PostgreSQL database that every worker of a team reaches.

    Each event loop gets its own connection pool (``run_sync`` starts a fresh loop per call,
    and a connection never crosses loops); a loop's pool closes when the loop shuts down, or
    on ``aclose()``. Steps are single statements, so a step is written whole or not at all.

    Times (``started_at``, lease expiry) come from ``clock`` when one is given, else from the
    database server's clock, so workers on machines whose clocks drift still agree on leases.
    """

    def __init__(
        self,
        dsn: str,
        *,
        clock: Callable[[], float] | None = None,
        max_connections: int = 10,
        connect_timeout: float = 10.0,
        cipher: JournalCipher | None = None,
    ) -> None:
        """Use the database at ``dsn``; nothing connects until the first call.

        ``max_connections`` bounds each event loop's pool; ``connect_timeout`` is how many
        seconds a call waits for a connection before it fails with ``JournalError``.
        ``cipher`` (an ``AESGCMCipher``) seals record bodies and prompts at rest.
        """
        self._where = _describe(dsn)
        self._cipher = cipher
        self._dsn = dsn
        self._clock = clock
        self._max_connections = max_connections
        self._connect_timeout = connect_timeout
        self._schema_ready = False
        self._closed = False
        self._pools: dict[asyncio.AbstractEventLoop, _LoopPool] = {}
        self._held: dict[str, str] = {}
        """The owner of each session lease this object took and has not given up."""

    @property
    def where(self) -> str:
        """The database, as shown in messages: user, host, port and name, no password."""
        return self._where

    async def append(self, records: Sequence[JournalRecord]) -> None:
        """Write one step in one statement; its first seq must be the session's next seq."""
        if not records:
            return
        session_id = check_step(records)
        params = self._step_params(session_id, records)
        first = records[0].seq
        statement = sql.APPEND_FIRST_STEP if first == 0 else sql.APPEND_NEXT_STEP

        async def write(conn: psycopg.AsyncConnection[Any]) -> int:
            cursor = await conn.execute(statement, params)
            return cursor.rowcount

        try:
            written = await self._use("append to", write)
        except JournalError:
            await self._drop_lease(session_id)
            raise
        if written != len(records):
            check_continues(session_id, await self.next_seq(session_id), first)
            raise JournalError(f"session {session_id!r} changed while appending; try again")

    async def read(self, session_id: str) -> tuple[JournalRecord, ...]:
        """Every record of the session in seq order."""
        check_session_id(session_id)

        async def select(conn: psycopg.AsyncConnection[Any]) -> list[tuple[int, str, str, float]]:
            cursor = await conn.execute(sql.SELECT_RECORDS, (session_id,))
            return await cursor.fetchall()

        rows = await self._use("read", select)
        if not rows:
            raise SessionNotFoundError(session_id)
        cipher = self._cipher
        try:
            return tuple(
                JournalRecord(
                    session_id=session_id,
                    seq=seq,
                    kind=kind,
                    data=decode_data(open_data(cipher, data, session_id, seq, kind)),
                    at=at,
                )
                for seq, kind, data, at in rows
            )
        except ValueError as exc:
            raise JournalError(f"session {session_id!r} holds a corrupt record: {exc}") from exc

    async def sessions(self) -> tuple[SessionInfo, ...]:
        """A summary of every session, the latest started first, from the sessions table."""

        async def select(conn: psycopg.AsyncConnection[Any]) -> list[tuple[Any, ...]]:
            # Binary rows: numbers and flags arrive without being parsed from text.
            cursor = await conn.execute(sql.SELECT_SESSIONS, binary=True)
            return await cursor.fetchall()

        agent_lists: dict[str, tuple[str, ...]] = {}

        def agents(text: str) -> tuple[str, ...]:
            if text not in agent_lists:
                agent_lists[text] = tuple(json.loads(text))
            return agent_lists[text]

        rows = await self._use("list sessions of", select)
        return opened_infos(self._cipher, [session_info(row, agents(row[7])) for row in rows])

    async def next_seq(self, session_id: str) -> int:
        """The seq the session's next record must have; 0 for a new session."""
        check_session_id(session_id)

        async def select(conn: psycopg.AsyncConnection[Any]) -> int:
            row = await (await conn.execute(sql.NEXT_SEQ, (session_id,))).fetchone()
            return 0 if row is None else int(row[0])

        return await self._use("read", select)

    async def delete(self, session_id: str) -> None:
        """Remove the session and its records in one statement."""
        check_session_id(session_id)

        async def remove(conn: psycopg.AsyncConnection[Any]) -> int:
            async with conn.transaction():
                cursor = await conn.execute(sql.DELETE_SESSION_ROW, (session_id,))
                await conn.execute(sql.DELETE_RECORDS, (session_id,))
            return cursor.rowcount

        if not await self._use("delete from", remove):
            raise SessionNotFoundError(session_id)

    async def acquire_lease(self, session_id: str, *, owner: str, ttl: float) -> None:
        """Take or renew the session's writer lease, seen by every worker of the database."""
        check_session_id(session_id)
        check_lease_args(owner, ttl)
        params = {"session_id": session_id, "owner": owner, "ttl": float(ttl), "now": self._now()}

        async def take(conn: psycopg.AsyncConnection[Any]) -> tuple[str, float] | None:
            # A row with no owner: taken; with one: its holder; none: it changed, ask again.
            for _ in range(3):
                row = await (await conn.execute(sql.TAKE_LEASE, params)).fetchone()
                if row is not None:
                    return None if row[0] is None else (str(row[0]), float(row[1]))
            raise JournalError(f"the lease of session {session_id!r} keeps changing; try again")

        try:
            held = await self._use("take a lease in", take)
        except JournalError:
            await self._drop_lease(session_id)
            raise
        if held is not None:
            raise SessionBusyError(session_id, owner=held[0], expires_at=held[1])
        self._held[session_id] = owner

    async def release_lease(self, session_id: str, *, owner: str) -> None:
        """Give up the lease if ``owner`` holds it."""
        check_session_id(session_id)

        async def release(conn: psycopg.AsyncConnection[Any]) -> None:
            await conn.execute(sql.RELEASE_LEASE, (session_id, owner))

        if self._held.get(session_id) == owner:
            del self._held[session_id]
        await self._use("release a lease in", release)

    async def _drop_lease(self, session_id: str) -> None:
        """A write of the session failed, so its run is over: give its lease up now, so a
        resume need not wait out the lease. A killed connection is replaced by the pool, so
        the release is tried on a few connections; a database that is down keeps the lease
        until it expires."""
        owner = self._held.pop(session_id, None)
        if owner is None:
            return
        for _ in range(3):
            try:
                await self.release_lease(session_id, owner=owner)
            except JournalError:
                continue
            return

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

    def __enter__(self) -> PostgresJournal:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> PostgresJournal:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"PostgresJournal({self._where!r})"

    def _now(self) -> float | None:
        return None if self._clock is None else self._clock()

    def _step_params(self, session_id: str, records: Sequence[JournalRecord]) -> dict[str, Any]:
        # Refuses non-JSON before any I/O.
        datas = [seal_data(self._cipher, encode_data(r), *place(r)) for r in records]
        facts = step_facts(records)
        return {
            "session_id": session_id,
            "first": records[0].seq,
            "count": len(records),
            "kinds": json.dumps([record.kind for record in records]),
            "datas": sql.RECORD_SEPARATOR.join(datas),
            "finished": facts.finished,
            "stop_reason": facts.stop_reason,
            "prompt": seal_prompt(self._cipher, facts.prompt, session_id),
            "agents": json.dumps(list(facts.agents)),
            "now": self._now(),
            # Each record's time from the run's clock, null (the step's time) when it has none.
            "times": json.dumps([_finite(record.at) for record in records]),
        }

    async def _use(
        self, action: str, work: Callable[[psycopg.AsyncConnection[Any]], Awaitable[_T]]
    ) -> _T:
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
                f"cannot {action} the journal at {self._where}: {_one_line(exc)}"
            ) from exc

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
                f"cannot connect to the journal at {self._where}: {_one_line(exc)}"
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
                f"({_one_line(exc)}); connect once as a user with CREATE on the schema, or "
                "GRANT CREATE ON SCHEMA public to this user"
            ) from exc
        except psycopg.Error as exc:
            raise JournalError(
                f"cannot set up the journal at {self._where}: {_one_line(exc)}"
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
                f"cannot connect to the journal at {self._where}: {_one_line(exc)}; "
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


def _describe(dsn: str) -> str:
    """``user@host:port/dbname`` for messages; the password never appears."""
    if not isinstance(dsn, str) or not dsn:
        raise ConfigurationError(
            f"a Postgres journal needs a DSN such as postgresql://user:password@host/db, "
            f"got {dsn!r}"
        )
    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as exc:
        raise ConfigurationError(
            f"invalid Postgres DSN ({_one_line(exc)}); write postgresql://user:password@host/db"
        ) from None
    user = parts.get("user", "")
    host = parts.get("host", "localhost")
    port = parts.get("port", "5432")
    name = parts.get("dbname", user)
    return f"postgresql://{user}{'@' if user else ''}{host}:{port}/{name}"


def _connect_hint(exc: psycopg.Error) -> str:
    text = str(exc).lower()
    if "password" in text or "authentication" in text or "role" in text:
        return "check the user and password in the DSN"
    if "database" in text and "does not exist" in text:
        return "create the database first (createdb), or fix its name in the DSN"
    return "check the host and port in the DSN, and that the server is running"


def _one_line(exc: BaseException) -> str:
    return "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())


def _finite(at: float | None) -> float | None:
    if at is None or isinstance(at, bool) or not math.isfinite(at):
        return None
    return float(at)


def _whole_seconds(seconds: float) -> int:
    # libpq takes whole seconds, and reads 0 as "wait forever".
    return max(1, round(seconds))
