"""PostgresJournal: a journal in PostgreSQL shared by many workers (psycopg in _postgres* only)."""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg.conninfo import conninfo_to_dict

from swarmkit.exceptions import (
    ConfigurationError,
    JournalError,
    SessionBusyError,
    SessionNotFoundError,
)
from swarmkit.journal import _postgres_schema as sql
from swarmkit.journal._cipher import JournalCipher, opened_infos, seal_prompt
from swarmkit.journal._many import decode_many, read_each
from swarmkit.journal._postgres_pool import LoopPools, one_line
from swarmkit.journal._postgres_seals import PostgresSeals, SealedStep
from swarmkit.journal._records import (
    JournalRecord,
    Kinds,
    Leading,
    SessionInfo,
    check_continues,
    check_lease_args,
    check_session_id,
    check_step,
    decode_data,
    encode_data,
    many_asked,
    session_info,
    step_facts,
)

_T = TypeVar("_T")
_MANY_CHUNK = 1000
"""Session ids bound in one ``read_many`` statement."""


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
        self._clock = clock
        self._pools = LoopPools(
            dsn,
            where=self._where,
            max_connections=max_connections,
            connect_timeout=connect_timeout,
        )
        self._seals = PostgresSeals(cipher, self._use)
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
        texts = [encode_data(r) for r in records]  # refuses data JSON cannot hold, before I/O
        first = records[0].seq
        statement = sql.APPEND_FIRST_STEP if first == 0 else sql.APPEND_NEXT_STEP

        async def write(conn: psycopg.AsyncConnection[Any]) -> int:
            cursor = await conn.execute(statement, params)
            return cursor.rowcount

        try:
            step = await self._seals.seal(records, texts)
            params = self._step_params(session_id, records, step)
            written = await self._use("append to", write)
        except JournalError:
            self._seals.forget(session_id)
            await self._drop_lease(session_id)
            raise
        if written != len(records):
            self._seals.forget(session_id)
            await self._seals.check_in_clear(session_id)
            check_continues(session_id, await self.next_seq(session_id), first)
            raise JournalError(f"session {session_id!r} changed while appending; try again")
        self._seals.wrote(session_id, step, finished=bool(params["finished"]))

    async def read(self, session_id: str) -> tuple[JournalRecord, ...]:
        """Every record of the session in seq order."""
        check_session_id(session_id)
        # Opened and checked even without a cipher: a sealed record then says so.
        rows = await self._seals.read(session_id)
        if not rows:
            raise SessionNotFoundError(session_id)
        try:
            return tuple(
                JournalRecord(
                    session_id=session_id,
                    seq=seq,
                    kind=kind,
                    data=decode_data(str(data)),
                    at=at if isinstance(at, float) else None,
                )
                for seq, kind, data, at in rows
            )
        except ValueError as exc:
            raise JournalError(f"session {session_id!r} holds a corrupt record: {exc}") from exc

    async def read_many(
        self, session_ids: Sequence[str], *, kinds: Kinds = None, leading: Leading = None
    ) -> dict[str, tuple[JournalRecord, ...]]:
        """Each listed session's records, only ``kinds`` when given, in seq order, in one
        statement per 1,000 sessions and decoding only what is asked; a session absent is
        left out. A sealed journal reads (and checks) each session whole instead."""
        ids, wanted = many_asked(session_ids, kinds, leading)
        if wanted == []:
            return {}
        found: dict[str, tuple[JournalRecord, ...]] = {}
        for start in range(0, len(ids), _MANY_CHUNK):
            chunk = ids[start : start + _MANY_CHUNK]
            rows = await self._seals.read_many(chunk, wanted, leading)
            found.update(
                decode_many(rows, leading)
                if rows is not None
                else await read_each(self, chunk, wanted, leading)
            )
        return found

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
        await self._pools.aclose()

    def close(self) -> None:
        """Refuse later calls; each loop's pool closes as its loop shuts down."""
        self._pools.close()

    def __enter__(self) -> PostgresJournal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> PostgresJournal:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"PostgresJournal({self._where!r})"

    def _now(self) -> float | None:
        return None if self._clock is None else self._clock()

    def _step_params(
        self, session_id: str, records: Sequence[JournalRecord], step: SealedStep
    ) -> dict[str, Any]:
        facts = step_facts(records)
        return {
            "session_id": session_id,
            "first": records[0].seq,
            "count": len(records),
            "kinds": json.dumps([record.kind for record in records]),
            "datas": sql.RECORD_SEPARATOR.join(step.datas),
            "seal": step.seal,
            "prev_seal": step.prev_seal,
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
        return await self._pools.use(action, work)


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
            f"invalid Postgres DSN ({one_line(exc)}); write postgresql://user:password@host/db"
        ) from None
    user = parts.get("user", "")
    host = parts.get("host", "localhost")
    port = parts.get("port", "5432")
    name = parts.get("dbname", user)
    return f"postgresql://{user}{'@' if user else ''}{host}:{port}/{name}"


def _finite(at: float | None) -> float | None:
    if at is None or isinstance(at, bool) or not math.isfinite(at):
        return None
    return float(at)
