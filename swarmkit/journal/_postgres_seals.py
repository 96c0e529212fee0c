"""Sealed sessions in a Postgres journal: a seal per session row, the mark, one-statement reads.

``_chain`` describes the format and why each part is kept where it is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from swarmkit.journal import _postgres_schema as sql
from swarmkit.journal._chain import (
    Mark,
    Row,
    Tip,
    continuing_link,
    form_of,
    needs_mark,
    open_session,
    refused_in_clear,
    seal_mark,
    seal_step,
    seal_tip,
)
from swarmkit.journal._cipher import JournalCipher
from swarmkit.journal._records import JournalRecord, Leading, leading_heads

_Conn = psycopg.AsyncConnection[Any]
Use = Callable[[str, Callable[[_Conn], Awaitable[Any]]], Awaitable[Any]]
"""How the journal runs work on a pooled connection (``PostgresJournal._use``)."""

_KEPT_TIPS = 4096
"""Sessions whose seal a journal object remembers from its own writes, the latest kept."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SealedStep:
    """A step's data as stored, and what it does to the session's seal."""

    datas: list[str]
    """Each record's data text: sealed with a cipher, else in clear."""
    seal: str | None
    """The session's seal after the step; None in clear."""
    prev_seal: str | None
    """The seal the step continues, which the session's row must still hold."""
    tip: Tip | None
    """What ``seal`` vouches for."""


class PostgresSeals:
    """How one ``PostgresJournal`` seals and opens sessions: its cipher (None: in clear), the
    seals of its own latest steps (so a run's next step needs no read first), and the
    journal's mark once read."""

    def __init__(self, cipher: JournalCipher | None, use: Use) -> None:
        self.cipher = cipher
        """Seals record bodies; None writes them in clear (refused once the journal is marked)."""
        self._use = use
        self._marked = False
        self._mark: Mark | None = None
        self._tips: dict[str, tuple[str, Tip]] = {}

    async def seal(self, records: Sequence[JournalRecord], texts: Sequence[str]) -> SealedStep:
        """A step's stored data and seals; a continued session's seal is this object's own
        latest one, or read first."""
        cipher = self.cipher
        if cipher is None:
            return SealedStep(datas=list(texts), seal=None, prev_seal=None, tip=None)
        if not self._marked:

            async def mark(conn: _Conn) -> None:
                await _mark_journal(conn, cipher)

            await self._use("mark", mark)
            self._marked = True
        session_id, first = records[0].session_id, records[0].seq
        prev, prev_seal = "", None
        if first > 0:
            prev, prev_seal = await self._continuing(cipher, session_id, first)
        datas, tip = seal_step(cipher, records, texts, prev)
        seal = seal_tip(cipher, session_id, tip)
        return SealedStep(datas=datas, seal=seal, prev_seal=prev_seal, tip=tip)

    def wrote(self, session_id: str, step: SealedStep, *, finished: bool) -> None:
        """Remember the session's seal after a step this object wrote (a finished run's
        session is forgotten: it is seldom written again)."""
        self._tips.pop(session_id, None)
        if step.seal is None or step.tip is None or finished:
            return
        if len(self._tips) >= _KEPT_TIPS:
            del self._tips[next(iter(self._tips))]
        self._tips[session_id] = (step.seal, step.tip)

    def forget(self, session_id: str) -> None:
        """Forget the session's seal after a step that failed."""
        self._tips.pop(session_id, None)

    async def check_in_clear(self, session_id: str) -> None:
        """After a step in clear wrote nothing: refuse it if the journal or session seals."""
        if self.cipher is not None:
            return

        async def select(conn: _Conn) -> tuple[Any, ...] | None:
            return await (await conn.execute(sql.SEALED_STATE, (session_id,))).fetchone()

        row = await self._use("append to", select)
        if row is not None and row[0]:
            raise refused_in_clear(session_id, journal=True)
        if row is not None and row[1]:
            raise refused_in_clear(session_id, journal=False)

    async def read(self, session_id: str) -> list[Row]:
        """The session's rows, opened and checked (none if there is no such session; a seal
        whose records are all gone is an error)."""

        async def select(conn: _Conn) -> list[tuple[Any, ...]]:
            cursor = await conn.execute(sql.SELECT_SESSION, {"session_id": session_id})
            return await cursor.fetchall()

        seal: str | None = None
        marked = False
        rows: list[Row] = []
        for seq, kind, data, at in await self._use("read", select):
            if seq == sql.SEAL_ROW:
                seal = data
            elif seq == sql.MARK_ROW:
                marked = True
            else:
                rows.append((seq, kind, data, at))
        if not rows and seal is None:
            return []
        mark = await self._read_mark() if marked and needs_mark(rows) else None
        return open_session(self.cipher, session_id, rows, seal=seal, mark=mark)

    async def read_many(
        self, session_ids: Sequence[str], kinds: Sequence[str] | None, leading: Leading = None
    ) -> list[tuple[Any, ...]] | None:
        """Rows of many sessions (only ``kinds``, if given) from one snapshot, ordered by
        session and seq; None when they must be opened and checked one session at a time (a
        cipher, a marked journal, a sealed session, a record not in clear)."""
        if self.cipher is not None:
            return None
        led = {k: leading_heads(names[:1])[0][1] for k, names in (leading or {}).items() if names}
        params = {
            "ids": list(session_ids),
            "kinds": None if kinds is None else list(kinds),
            "led": list(led),
            "heads": list(led.values()),
        }

        async def select(conn: _Conn) -> list[tuple[Any, ...]]:
            return await (await conn.execute(sql.SELECT_MANY, params)).fetchall()

        rows: list[tuple[Any, ...]] = await self._use("read", select)
        if (rows and rows[0][0] is None) or any(form_of(row[3]) != "clear" for row in rows):
            return None
        return rows

    async def _continuing(
        self, cipher: JournalCipher, session_id: str, first: int
    ) -> tuple[str, str | None]:
        """The link and the seal a step that starts at ``first`` continues."""
        kept = self._tips.get(session_id)
        if kept is not None and kept[1].records == first:
            return kept[1].last, kept[0]

        async def select(conn: _Conn) -> tuple[Any, ...] | None:
            params = {"session_id": session_id, "seq": first - 1}
            cursor = await conn.execute(sql.SEAL_AND_RECORD, params)
            return await cursor.fetchone()

        row = await self._use("read", select)
        seal, previous = (None, None) if row is None else (row[0], row[1])
        mark = await self._read_mark() if seal is None and previous is not None else None
        link = continuing_link(cipher, session_id, first, seal=seal, previous=previous, mark=mark)
        return link, seal

    async def _read_mark(self) -> Mark | None:
        if self._mark is None:

            async def select(conn: _Conn) -> tuple[Any, ...] | None:
                return await (await conn.execute(sql.SELECT_MARK)).fetchone()

            row = await self._use("read", select)
            if row is not None:
                self._mark = Mark(str(row[0]))
        return self._mark


async def _mark_journal(conn: _Conn, cipher: JournalCipher) -> None:
    """Mark the journal with the sessions it holds, unless it is marked already."""
    async with conn.transaction():
        if await (await conn.execute(sql.IS_MARKED)).fetchone() is not None:
            return
        sessions = [row[0] for row in await (await conn.execute(sql.SESSION_IDS)).fetchall()]
        await conn.execute(sql.INSERT_MARK, (seal_mark(cipher, sessions),))
