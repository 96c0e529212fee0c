"""Sealed sessions in an SQLite journal: the seals table, the mark in ``meta``, snapshot reads.

``_chain`` describes the format and why each part is kept where it is.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from swarmkit.journal._chain import (
    Mark,
    Row,
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
from swarmkit.journal._sqlite_file import rollback

_R = TypeVar("_R")

StoredRow = tuple[str, int, str, str, float]
"""A record as the records table takes it: session id, seq, kind, data text, time."""
PathsAsked = Mapping[str, Sequence[str | Sequence[str]]]
"""Record kind -> the JSON paths to read of its records' data (see ``read_paths``)."""

NOT_MARKED = "NOT EXISTS (SELECT 1 FROM meta WHERE key = 'seal')"
"""SQL that holds while the journal has no mark: what a write in clear needs."""

# Created by the first sealed write, as the leases table is by the first lease: a journal
# never sealed keeps its tables as they were, and reading one never changes the file.
_CREATE_SEALS = (
    "CREATE TABLE IF NOT EXISTS seals (session_id TEXT PRIMARY KEY, seal TEXT NOT NULL)"
    " WITHOUT ROWID"
)
_HAS_SEALS = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'seals'"
_SELECT_SEAL = "SELECT seal FROM seals WHERE session_id = ?"
_KEEP_SEAL = "INSERT OR REPLACE INTO seals (session_id, seal) VALUES (?, ?)"
_DELETE_SEAL = "DELETE FROM seals WHERE session_id = ?"
_IS_MARKED = "SELECT 1 FROM meta WHERE key = 'seal'"
_SELECT_MARK = "SELECT value FROM meta WHERE key = 'seal'"
_INSERT_MARK = "INSERT OR IGNORE INTO meta (key, value) VALUES ('seal', ?)"
_SELECT_RECORD = "SELECT data FROM records WHERE session_id = ? AND seq = ?"
_SELECT_RECORDS = (
    "SELECT seq, kind, data, written_at FROM records WHERE session_id = ? ORDER BY seq"
)


class SQLiteSeals:
    """How one ``SQLiteJournal`` seals and opens sessions: its cipher (None: in clear), and
    what it learnt of the file (the seals table exists, the journal's mark)."""

    def __init__(self, cipher: JournalCipher | None) -> None:
        self.cipher = cipher
        """Seals record bodies; None writes them in clear (refused once the journal is marked)."""
        self._has_table = False
        self._mark: Mark | None = None

    def step_rows(
        self,
        conn: sqlite3.Connection,
        records: Sequence[JournalRecord],
        texts: Sequence[str],
        times: Sequence[float],
    ) -> tuple[list[StoredRow], str | None]:
        """A step's rows as stored, and the session's new seal (None in clear); called in the
        step's transaction, so its chain continues the session's seal as committed."""
        session_id = records[0].session_id
        cipher = self.cipher
        if cipher is None:
            return _rows(records, texts, times), None
        prev = ""
        first = records[0].seq
        self._mark_journal(conn, cipher)
        if first > 0:
            seal = self._seal_of(conn, session_id)
            previous: object = None
            mark: Mark | None = None
            if seal is None:  # a session begun before the journal's chains, or a bad one
                previous = _data_of(conn, session_id, first - 1)
                row = conn.execute(_SELECT_MARK).fetchone()
                mark = None if row is None else Mark(str(row[0]))
            prev = continuing_link(
                cipher, session_id, first, seal=seal, previous=previous, mark=mark
            )
        stored, tip = seal_step(cipher, records, texts, prev)
        return _rows(records, stored, times), seal_tip(cipher, session_id, tip)

    def keep(self, conn: sqlite3.Connection, session_id: str, seal: str | None) -> None:
        """Store the session's new seal, in the step's transaction."""
        if seal is not None:
            conn.execute(_KEEP_SEAL, (session_id, seal))

    def read(self, conn: sqlite3.Connection, session_id: str) -> list[Row]:
        """The session's rows, opened and checked (none if there is no such session; a seal
        whose records are all gone is an error)."""
        rows, seal = self._snapshot(conn, session_id)
        if not rows and seal is None:
            return []
        mark = self._read_mark(conn) if needs_mark(rows) else None
        return open_session(self.cipher, session_id, rows, seal=seal, mark=mark)

    def read_many(
        self,
        conn: sqlite3.Connection,
        session_ids: Sequence[str],
        kinds: Sequence[str] | None,
        leading: Leading = None,
    ) -> list[StoredRow] | None:
        """Rows of many sessions (only ``kinds``, if given) in one read transaction, ordered
        by session and seq, those of a ``leading`` kind only where their text starts with its
        first member (the others would be dropped once read); None when the journal was ever
        sealed (each session must then be opened and checked whole)."""
        rows = self._read_clear(conn, lambda: _select_many(conn, session_ids, kinds, leading))
        if rows is None or any(form_of(row[3]) != "clear" for row in rows):
            return None
        return rows

    def read_paths(
        self, conn: sqlite3.Connection, session_ids: Sequence[str], paths: PathsAsked
    ) -> list[tuple[object, ...]] | None:
        """Rows (session id, seq, kind, texts...) of many sessions in one read transaction,
        each text the JSON at one of the kind's paths (see ``_select_paths``);
        None when the journal was ever sealed, or its SQLite cannot extract JSON."""
        try:
            return self._read_clear(conn, lambda: _select_paths(conn, session_ids, paths))
        except sqlite3.OperationalError:  # no JSON functions, or data that is not JSON
            return None

    def _read_clear(self, conn: sqlite3.Connection, select: Callable[[], _R]) -> _R | None:
        """``select``'s rows in one read transaction, or None when the journal was ever sealed
        or marked (its sessions must then be opened and checked whole)."""
        if self.cipher is not None or self._seals_exist(conn):
            return None
        conn.execute("BEGIN")
        try:
            rows = None if conn.execute(_IS_MARKED).fetchone() else select()
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise
        return rows

    def forget(self, conn: sqlite3.Connection, session_id: str) -> None:
        """Remove a deleted session's seal, in its transaction."""
        if self._seals_exist(conn):
            conn.execute(_DELETE_SEAL, (session_id,))

    def _snapshot(self, conn: sqlite3.Connection, session_id: str) -> tuple[list[Row], str | None]:
        # One read transaction: a step committed between the two reads would otherwise
        # look like records missing from the session's end.
        conn.execute("BEGIN")
        try:
            rows: list[Row] = conn.execute(_SELECT_RECORDS, (session_id,)).fetchall()
            seal = self._seal_of(conn, session_id)
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise
        return rows, seal

    def _mark_journal(self, conn: sqlite3.Connection, cipher: JournalCipher) -> None:
        """Mark the journal with the sessions it holds, unless it is marked already."""
        if conn.execute(_IS_MARKED).fetchone() is not None:
            return
        sessions = [row[0] for row in conn.execute("SELECT session_id FROM sessions")]
        conn.execute(_INSERT_MARK, (seal_mark(cipher, sessions),))
        conn.execute(_CREATE_SEALS)

    def _read_mark(self, conn: sqlite3.Connection) -> Mark | None:
        if self._mark is None:
            row = conn.execute(_SELECT_MARK).fetchone()
            if row is not None and isinstance(row[0], str):
                self._mark = Mark(row[0])
        return self._mark

    def _seal_of(self, conn: sqlite3.Connection, session_id: str) -> str | None:
        if not self._seals_exist(conn):
            return None
        row = conn.execute(_SELECT_SEAL, (session_id,)).fetchone()
        return None if row is None else str(row[0])

    def _seals_exist(self, conn: sqlite3.Connection) -> bool:
        # Once there, the table stays: only its absence is asked again.
        self._has_table = self._has_table or conn.execute(_HAS_SEALS).fetchone() is not None
        return self._has_table


def refuse_in_clear(conn: sqlite3.Connection, session_id: str) -> None:
    """Refuse a step in clear to a marked journal or a sealed session (``JournalError``)."""
    if conn.execute(_IS_MARKED).fetchone() is not None:
        raise refused_in_clear(session_id, journal=True)
    sealed = conn.execute(_HAS_SEALS).fetchone() is not None and (
        conn.execute(_SELECT_SEAL, (session_id,)).fetchone() is not None
    )
    if sealed:
        raise refused_in_clear(session_id, journal=False)


def _rows(
    records: Sequence[JournalRecord], texts: Sequence[str], times: Sequence[float]
) -> list[StoredRow]:
    return [
        (record.session_id, record.seq, record.kind, text, at)
        for record, text, at in zip(records, texts, times, strict=True)
    ]


def _data_of(conn: sqlite3.Connection, session_id: str, seq: int) -> object:
    row = conn.execute(_SELECT_RECORD, (session_id, seq)).fetchone()
    return None if row is None else row[0]


_MANY_CHUNK = 500
"""Session ids bound in one query (SQLite's limit on variables is far above)."""


def _select_many(
    conn: sqlite3.Connection,
    session_ids: Sequence[str],
    kinds: Sequence[str] | None,
    leading: Leading = None,
) -> list[StoredRow]:
    rows: list[StoredRow] = []
    kind_filter = "" if kinds is None else f" AND kind IN ({', '.join('?' * len(kinds))})"
    led: list[object] = []
    for kind, names in (leading or {}).items():
        if names:  # a row of this kind that starts otherwise (or is sealed: read to refuse it)
            head = leading_heads(names[:1])[0][1]
            kind_filter += f" AND (kind <> ? OR substr(data, 1, ?) = ? OR {_SEALED_ROW})"
            led += [kind, len(head), head]
    for start in range(0, len(session_ids), _MANY_CHUNK):
        chunk = list(session_ids[start : start + _MANY_CHUNK])
        query = (
            "SELECT session_id, seq, kind, data, written_at FROM records"
            f" WHERE session_id IN ({', '.join('?' * len(chunk))}){kind_filter}"
            " ORDER BY session_id, seq"
        )
        rows.extend(conn.execute(query, [*chunk, *(kinds or ()), *led]).fetchall())
    return rows


# Sealed data is JSON too ({"chained": "..."}): a batch holding any is read whole instead.
_SEALED_ROW = '(substr(data, 1, 12) = \'{"chained":"\' OR substr(data, 1, 11) = \'{"sealed":"\')'


def _select_paths(
    conn: sqlite3.Connection, session_ids: Sequence[str], paths: PathsAsked
) -> list[tuple[object, ...]] | None:
    """Each row of a kind in ``paths`` holds the JSON text at each of its paths (None where
    absent), or for a tuple of paths a JSON array of their values (null where absent); rows of
    other kinds hold None. A path ending in a plain name is read only from records whose text
    holds that name as a key (``"error":``): the journal writes such names unescaped, so the
    others lack it and are not parsed for it."""
    columns, bound = _path_columns(paths)
    rows: list[tuple[object, ...]] = []
    for start in range(0, len(session_ids), _MANY_CHUNK):
        chunk = list(session_ids[start : start + _MANY_CHUNK])
        among = f"session_id IN ({', '.join('?' * len(chunk))})"
        sealed = f"SELECT 1 FROM records WHERE {among} AND {_SEALED_ROW} LIMIT 1"
        if conn.execute(sealed, chunk).fetchone() is not None:
            return None
        query = (
            f"SELECT session_id, seq, kind{columns} FROM records WHERE {among}"
            " ORDER BY session_id, seq"
        )
        rows.extend(conn.execute(query, [*bound, *chunk]).fetchall())
    return rows


_LAST_NAME = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)\Z")
"""A path's last step, when it is a plain name (which the journal's JSON never escapes)."""


def _path_columns(paths: PathsAsked) -> tuple[str, list[str]]:
    """The SELECT's text columns (a ``CASE`` on the kind each) and the values they bind."""
    width = max((len(asked) for asked in paths.values()), default=0)
    columns = ""
    bound: list[str] = []
    for index in range(width):
        cases = ""
        for kind, asked in paths.items():
            if index >= len(asked):
                continue
            path = asked[index]
            if isinstance(path, str):
                cases += " WHEN ? THEN data -> ?"
                bound += [kind, path]
                name = _LAST_NAME.search(path)
                if name is not None:
                    # A key absent from the text is absent: no parse (see read_paths).
                    cases = (
                        cases[: -len("data -> ?")] + "CASE WHEN instr(data, ?) THEN data -> ? END"
                    )
                    bound[-1:] = [f'"{name.group(1)}":', path]
            else:
                cases += f" WHEN ? THEN json_extract(data{', ?' * len(path)})"
                bound += [kind, *path]
        columns += f", CASE kind{cases} END"
    return columns, bound
