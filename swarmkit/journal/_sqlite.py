"""SQLiteJournal: the embedded default journal, one WAL-mode SQLite file shared by processes."""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import math
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from swarmkit.exceptions import JournalError, SessionBusyError, SessionNotFoundError
from swarmkit.journal._cipher import JournalCipher, opened_infos, seal_prompt
from swarmkit.journal._group_commit import GroupCommit
from swarmkit.journal._many import decode_many, read_each
from swarmkit.journal._records import (
    JournalRecord,
    Kinds,
    Leading,
    Lease,
    SessionInfo,
    StepFacts,
    check_continues,
    check_lease_args,
    check_session_id,
    check_step,
    decode_records,
    encode_data,
    many_asked,
    merge_agents,
    session_info,
    step_facts,
    take_lease,
)
from swarmkit.journal._sqlite_file import (
    INSERT_SESSION,
    connect,
    connect_read_only,
    failure_hint,
    in_transaction,
    is_busy,
)
from swarmkit.journal._sqlite_seals import NOT_MARKED, SQLiteSeals, StoredRow, refuse_in_clear
from swarmkit.journal._stored import StoredRecords

_T = TypeVar("_T")

_INSERT_RECORD = (
    "INSERT INTO records (session_id, seq, kind, data, written_at) VALUES (?, ?, ?, ?, ?)"
)
_SESSION_ROW = "SELECT records, agents FROM sessions WHERE session_id = ?"
_UPDATE_SESSION = (
    "UPDATE sessions SET records = records + ?, updated_at = ?, finished = finished OR ?,"
    " stop_reason = CASE WHEN ? THEN ? ELSE stop_reason END, prompt = coalesce(prompt, ?),"
    " agents = ? WHERE session_id = ?"
)
# A later step of a session whose agents it does not extend: the seq check and the summary's
# update in one statement (no row changed means the seq does not continue the session, or a
# step in clear meets a journal that seals).
_CONTINUE_SESSION = (
    "UPDATE sessions SET records = records + ?, updated_at = ?, finished = finished OR ?,"
    " stop_reason = CASE WHEN ? THEN ? ELSE stop_reason END, prompt = coalesce(prompt, ?)"
    f" WHERE session_id = ? AND records = ? AND (? OR {NOT_MARKED})"
)
# A new session's first step in clear: its summary row is inserted unless the session has one
# already or the journal seals (no row inserted: the checks below say which, as for any step).
_START_SESSION = (
    "INSERT INTO sessions (session_id, records, started_at, updated_at, finished, stop_reason,"
    " prompt, agents) SELECT ?, ?, ?, ?, ?, ?, ?, ?"
    f" WHERE NOT EXISTS (SELECT 1 FROM sessions WHERE session_id = ?) AND {NOT_MARKED}"
)
_SELECT_SESSIONS = (
    "SELECT session_id, records, started_at, updated_at, finished, stop_reason, prompt, agents"
    " FROM sessions ORDER BY started_at DESC, rowid DESC"
)
_SELECT_STARTS = "SELECT session_id, started_at FROM sessions ORDER BY session_id"
# Created on the first lease, so opening a journal to read it never changes the file.
_CREATE_LEASES = (
    "CREATE TABLE IF NOT EXISTS leases (session_id TEXT PRIMARY KEY, owner TEXT NOT NULL,"
    " expires_at REAL NOT NULL) WITHOUT ROWID"
)


class SQLiteJournal:
    """A journal in one SQLite file; several processes may write different sessions at once.

    Writes go through a group commit: the steps and leases that concurrent sessions of one
    event loop write in the same pass share one transaction, and each writer goes on only once
    its own write is committed. The SQLite work runs on the loop's thread: the file is local
    and a commit takes well under a millisecond, less than a hop to a worker thread would
    cost. While another process holds the file's write lock, writes wait on the loop's timer,
    not in a blocking busy handler. One connection is reused for the journal's lifetime and
    guarded by a lock, so threads (each with its own event loop) may share the object.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        clock: Callable[[], float] = time.time,
        timeout: float = 30.0,
        read_only: bool = False,
        cipher: JournalCipher | None = None,
    ) -> None:
        """Open or create the journal at ``path``; its parent directory must exist.

        A new file is created when the journal is first used (a write, a read, ``with``), not
        here: a module that builds its swarm with ``SQLiteJournal(path)`` at import leaves no
        file behind when it is only checked or drawn.

        ``timeout`` is how many seconds a write waits for another process's write to finish.
        ``read_only=True`` opens an existing journal for reading only (sessions, read, replay),
        e.g. one on a read-only disk or owned by another user; it never changes the file.
        ``cipher`` (an ``AESGCMCipher``) seals record bodies and prompts at rest.
        """
        self._path = Path(path)
        self._cipher = cipher
        self._seals = SQLiteSeals(cipher)
        self._clock = clock
        self._timeout = timeout
        self._lock = threading.Lock()
        self.read_only = read_only
        """Whether this journal was opened for reading only."""
        self._conn = _connect_unless_new(self._path, timeout, read_only=read_only)
        self._deferred = self._conn is None  # the file is created on first use: _connection
        self._commits = GroupCommit(
            connection=self._connection,
            lock=self._lock,
            timeout=timeout,
            failure=functools.partial(_failure, self._path, self._timeout),
            closed=functools.partial(_closed_error, self._path),
        )
        # Leases this object holds, by session: (owner, ttl). A run's finishing step gives its
        # lease up in the same transaction ("folded"), so the release that follows is free.
        self._held: dict[str, tuple[str, float]] = {}
        self._folded: dict[str, tuple[str, float]] = {}
        # Owners whose run failed to write its session and could not give the lease up in the
        # file (its write lock was still taken), shared by every journal object on the file in
        # this process: a lease taken replaces theirs, and any later write releases them.
        self._dropped = _dropped_leases(self._path)
        self._leases_table = False

    @property
    def path(self) -> Path:
        """The journal file."""
        return self._path

    async def append(self, records: Sequence[JournalRecord]) -> None:
        """Write one step in one transaction; its first seq must be the session's next seq."""
        if not records:
            return
        session_id = check_step(records)
        now = self._clock()
        cipher, seals = self._cipher, self._seals
        texts = [encode_data(r) for r in records]  # refuses data JSON cannot hold, before I/O
        # written_at holds the run's time of each record when it has one (JournalRecord.at);
        # a run's record has a float time, taken as it is without a call.
        times = [
            at if type(at := r.at) is float and math.isfinite(at) else _time(r, now)
            for r in records
        ]
        facts = step_facts(records)
        if cipher is not None:
            facts = replace(facts, prompt=seal_prompt(cipher, facts.prompt, session_id))
        folded = self._folded.get(session_id)
        lease = folded or self._held.get(session_id)
        release = lease is not None and facts.finished
        dropped = tuple(self._dropped.items()) if self._dropped else ()

        def work(conn: sqlite3.Connection) -> None:
            if dropped:
                _release_dropped(conn, dropped)
            if folded is not None:  # written again after its finish: hold the lease again
                _take_lease(conn, session_id, folded[0], folded[1], now)
            # Sealed in the transaction: the chain goes on from the seal as committed.
            rows, seal = seals.step_rows(conn, records, texts, times)
            _write_step(conn, rows, facts, now, sealed=seal is not None)
            seals.keep(conn, session_id, seal)
            if release and lease is not None:
                _release_lease(conn, session_id, lease[0])

        try:
            await self._commits.write("append to", work)
        except JournalError as exc:
            await self._drop_lease(session_id, exc)
            raise
        if dropped:
            _forget_dropped(self._dropped, dropped)
        if lease is not None and (release or folded is not None):  # else it stays as noted
            self._note_lease(session_id, lease, folded=release)

    async def read(self, session_id: str) -> tuple[JournalRecord, ...]:
        """Every record of the session in seq order."""
        check_session_id(session_id)
        # Opened and checked even without a cipher: a sealed record then says so.
        rows = self._run("read", lambda conn: self._seals.read(conn, session_id))
        if not rows:
            raise SessionNotFoundError(session_id)
        return decode_records(session_id, rows)

    async def read_stored(self, session_id: str) -> StoredRecords:
        """Every record of the session in seq order, each decoded only when it is read (a
        strict replay's records: the collector never scans thousands of decoded dicts)."""
        check_session_id(session_id)
        rows = self._run("read", lambda conn: self._seals.read(conn, session_id))
        if not rows:
            raise SessionNotFoundError(session_id)
        return StoredRecords(session_id, rows)

    async def read_many(
        self, session_ids: Sequence[str], *, kinds: Kinds = None, leading: Leading = None
    ) -> dict[str, tuple[JournalRecord, ...]]:
        """See ``swarmkit.journal.read_many``: one query per 500 sessions, decoding only what
        is asked; a journal ever sealed reads (and checks) each session whole instead."""
        ids, wanted = many_asked(session_ids, kinds, leading)
        if wanted == []:
            return {}
        rows = self._run("read", lambda conn: self._seals.read_many(conn, ids, wanted, leading))
        if rows is None:
            return await read_each(self, ids, wanted, leading)
        return decode_many(rows, leading)

    async def read_paths(
        self, session_ids: Sequence[str], paths: Mapping[str, Sequence[str | Sequence[str]]]
    ) -> list[tuple[object, ...]] | None:
        """The values SQLite extracts at ``paths`` (see ``_sqlite_seals.read_paths``), or None."""
        ids, _ = many_asked(session_ids, None)
        return self._run("read", lambda conn: self._seals.read_paths(conn, ids, paths))

    async def session_starts(self) -> list[tuple[str, float]]:
        """Each session's id and start time, in id order: a listing without the summaries."""
        return self._run("list sessions of", _session_starts)

    async def sessions(self) -> tuple[SessionInfo, ...]:
        """A summary of every session, the latest started first."""
        return opened_infos(self._cipher, self._run("list sessions of", _list_sessions))

    async def next_seq(self, session_id: str) -> int:
        """The seq the session's next record must have; 0 for a new session."""
        check_session_id(session_id)
        return self._run("read", lambda conn: _next_seq(conn, session_id))

    async def delete(self, session_id: str) -> None:
        """Remove the session and its records in one transaction."""
        check_session_id(session_id)
        deleted = await self._commits.write(
            "delete from", lambda conn: _delete_session(conn, session_id, self._seals)
        )
        if not deleted:
            raise SessionNotFoundError(session_id)

    async def acquire_lease(self, session_id: str, *, owner: str, ttl: float) -> None:
        """Take or renew the session's writer lease in the file, so other processes see it."""
        check_session_id(session_id)
        check_lease_args(owner, ttl)
        now = self._clock()
        create = not self._leases_table
        dropped = tuple(self._dropped.items())

        def take(conn: sqlite3.Connection) -> None:
            _release_dropped(conn, dropped)
            _take_lease(conn, session_id, owner, ttl, now, create=create)

        try:
            await self._commits.write("take a lease in", take)
        except SessionBusyError:
            raise
        except JournalError as exc:
            await self._drop_lease(session_id, exc)
            raise
        _forget_dropped(self._dropped, dropped)
        self._leases_table = True
        self._note_lease(session_id, (owner, ttl), folded=False)

    async def release_lease(self, session_id: str, *, owner: str) -> None:
        """Give up the lease if ``owner`` holds it."""
        check_session_id(session_id)
        folded = self._folded.get(session_id)
        if folded is not None and folded[0] == owner:
            # The run's finishing step already gave it up, in the step's own transaction.
            del self._folded[session_id]
            return
        if self._held.get(session_id, ("",))[0] == owner:
            del self._held[session_id]
        known = self._leases_table
        await self._commits.write(
            "release a lease in",
            lambda conn: _release_lease(conn, session_id, owner, known=known),
        )

    def close(self) -> None:
        """Commit the writes still queued, then close the connection; later calls raise
        ``JournalError``. Closing twice is fine."""
        self._commits.flush()
        self._release_dropped_now()
        with self._lock:
            self._connection()  # a journal never used still leaves its (empty) file, as before
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> SQLiteJournal:
        with self._lock:
            self._connection()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> SQLiteJournal:
        return self.__enter__()

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteJournal({str(self._path)!r})"

    def _run(self, action: str, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """Read with ``work`` on the open connection under the lock; SQLite errors become
        JournalError. A read waits out a briefly busy file (e.g. another process's recovery)."""
        deadline = time.monotonic() + self._timeout
        while True:
            with self._lock:
                conn = self._connection()
                if conn is None:
                    raise _closed_error(self._path, action)
                try:
                    return work(conn)
                except sqlite3.Error as exc:
                    if not is_busy(exc) or time.monotonic() > deadline:
                        raise _failure(self._path, self._timeout, action, exc) from exc
            time.sleep(0.001)

    def _connection(self) -> sqlite3.Connection | None:
        """The open connection (opening a deferred file now), or None once closed; called
        with the lock held."""
        if self._deferred:
            self._conn = connect(self._path, self._timeout)
            self._deferred = False
        return self._conn

    async def _drop_lease(self, session_id: str, failure: JournalError) -> None:
        """A write of the session failed, so its run is over: give its lease up now, so a
        resume need not wait out the lease. With the file's write lock taken by another
        process the release could not be written: the next write of any journal object on the
        file in this process releases it (a lease taken replaces it), and so does ``close()``."""
        lease = self._folded.pop(session_id, None) or self._held.pop(session_id, None)
        if lease is None:
            return
        self._dropped[session_id] = lease[0]
        cause = failure.__cause__
        if isinstance(cause, sqlite3.Error) and is_busy(cause):
            return  # the lock is still taken: trying now would only wait out the timeout again
        with contextlib.suppress(JournalError):
            await self._commits.write(
                "release a lease in", lambda conn: _release_lease(conn, session_id, lease[0])
            )
            _forget_dropped(self._dropped, ((session_id, lease[0]),))

    def _release_dropped_now(self) -> None:
        """At close: write the releases failed runs could not, waiting for the write lock up to
        the timeout, so another process need not wait the leases out."""
        dropped = tuple(self._dropped.items())
        if not dropped:
            return
        with self._lock, contextlib.suppress(sqlite3.Error):
            conn = self._connection()
            if conn is None:
                return
            conn.execute(f"PRAGMA busy_timeout={int(self._timeout * 1000)}")
            try:
                in_transaction(conn, lambda conn: _release_dropped(conn, dropped))
            finally:
                conn.execute("PRAGMA busy_timeout=0")
            _forget_dropped(self._dropped, dropped)

    def _note_lease(self, session_id: str, lease: tuple[str, float], *, folded: bool) -> None:
        """After a commit: whether this object still holds the session's lease in the file."""
        self._held.pop(session_id, None)
        self._folded.pop(session_id, None)
        (self._folded if folded else self._held)[session_id] = lease


def _failure(path: Path, timeout: float, action: str, exc: sqlite3.Error) -> JournalError:
    error = JournalError(
        f"cannot {action} the journal at {path}: {exc}{failure_hint(exc, timeout)}"
    )
    error.__cause__ = exc
    return error


def _closed_error(path: Path, action: str) -> JournalError:
    return JournalError(f"cannot {action} the journal at {path}: it is closed")


# By file (its real path): the leases of failed runs still to be released there.
_DROPPED: dict[str, dict[str, str]] = {}
_DROPPED_LOCK = threading.Lock()


def _dropped_leases(path: Path) -> dict[str, str]:
    """The file's dropped leases, by session: their owners."""
    with _DROPPED_LOCK:
        return _DROPPED.setdefault(os.path.realpath(path), {})


def _release_dropped(conn: sqlite3.Connection, dropped: tuple[tuple[str, str], ...]) -> None:
    for session_id, owner in dropped:
        _release_lease(conn, session_id, owner, known=False)


def _forget_dropped(shared: dict[str, str], released: tuple[tuple[str, str], ...]) -> None:
    """After their release was committed (unless a newer run dropped the lease since)."""
    for session_id, owner in released:
        if shared.get(session_id) == owner:
            del shared[session_id]


def _time(record: JournalRecord, now: float) -> float:
    at = record.at
    return now if at is None or isinstance(at, bool) or not math.isfinite(at) else float(at)


def _write_step(
    conn: sqlite3.Connection,
    rows: list[StoredRow],
    facts: StepFacts,
    now: float,
    *,
    sealed: bool,
) -> None:
    # Under the write lock, checking the first seq against the session's stored count both
    # refuses a second writer (an overlap) and a gap, whoever wrote or deleted in between. The
    # unique index alone catches an overlap but not a gap, e.g. after another connection
    # deleted the session.
    session_id, first_seq = rows[0][0], rows[0][1]
    if first_seq > 0 and not facts.agents:
        # The common step: no read of the session's row first.
        finished, stop_reason = facts.finished, facts.stop_reason
        continued = conn.execute(
            _CONTINUE_SESSION,
            (
                *(len(rows), now, finished, finished, stop_reason, facts.prompt),
                *(session_id, first_seq, sealed),
            ),
        )
        if continued.rowcount == 1:
            conn.executemany(_INSERT_RECORD, rows)
            return
    elif first_seq == 0 and not sealed:
        # A new session: the summary row's insert checks that none exists, in one statement.
        started = conn.execute(_START_SESSION, (*_new_session(rows, facts, now), session_id))
        if started.rowcount == 1:
            conn.executemany(_INSERT_RECORD, rows)
            return
    # A session's first step, a step naming agents, or one that does not continue the session
    # (refused there). The common steps above return first, so they pay for no extra call.
    if not sealed:
        refuse_in_clear(conn, session_id)
    _write_session_row(conn, rows, facts, now)
    conn.executemany(_INSERT_RECORD, rows)


def _write_session_row(
    conn: sqlite3.Connection,
    rows: list[StoredRow],
    facts: StepFacts,
    now: float,
) -> None:
    """Check that the step's rows continue the session's stored summary row, then insert that
    row (a new session) or update it, merging the step's agents; the records are the caller's."""
    session_id, first_seq, count = rows[0][0], rows[0][1], len(rows)
    row = conn.execute(_SESSION_ROW, (session_id,)).fetchone()
    check_continues(session_id, 0 if row is None else int(row[0]), first_seq)
    if row is None:
        conn.execute(INSERT_SESSION, _new_session(rows, facts, now))
    else:
        agents = json.dumps(merge_agents(tuple(json.loads(row[1])), facts.agents))
        conn.execute(
            _UPDATE_SESSION,
            (
                count,
                now,
                facts.finished,
                facts.finished,
                facts.stop_reason,
                facts.prompt,
                agents,
                session_id,
            ),
        )


def _new_session(
    rows: list[StoredRow], facts: StepFacts, now: float
) -> tuple[str, int, float, float, bool, str | None, str | None, str]:
    """A new session's summary row, from its first step."""
    return (
        rows[0][0],
        len(rows),
        rows[0][4],  # the first record's own time: an imported session keeps its start
        now,
        facts.finished,
        facts.stop_reason,
        facts.prompt,
        json.dumps(facts.agents),
    )


def _connect_unless_new(
    path: Path, timeout: float, *, read_only: bool
) -> sqlite3.Connection | None:
    """The journal's connection, or None for a file that does not exist yet (in a directory
    that does): it is created on first use, not here, so a module that builds a swarm with
    SQLiteJournal(path) at import leaves no file behind when it is only checked or drawn."""
    if read_only:
        return connect_read_only(path, timeout)
    if not path.exists() and path.parent.is_dir():
        return None
    return connect(path, timeout)


def _next_seq(conn: sqlite3.Connection, session_id: str) -> int:
    row = conn.execute(_SESSION_ROW, (session_id,)).fetchone()
    return 0 if row is None else int(row[0])


def _take_lease(
    conn: sqlite3.Connection,
    session_id: str,
    owner: str,
    ttl: float,
    now: float,
    *,
    create: bool = True,
) -> None:
    if create:  # once per journal object: the table, once made, is never dropped
        conn.execute(_CREATE_LEASES)
    row = conn.execute(
        "SELECT owner, expires_at FROM leases WHERE session_id = ?", (session_id,)
    ).fetchone()
    held = None if row is None else Lease(owner=row[0], expires_at=row[1])
    lease = take_lease(session_id, held, owner=owner, ttl=ttl, now=now)
    conn.execute(
        "INSERT OR REPLACE INTO leases (session_id, owner, expires_at) VALUES (?, ?, ?)",
        (session_id, lease.owner, lease.expires_at),
    )


def _release_lease(
    conn: sqlite3.Connection, session_id: str, owner: str, *, known: bool = True
) -> None:
    if known or conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'leases'").fetchone():
        conn.execute("DELETE FROM leases WHERE session_id = ? AND owner = ?", (session_id, owner))


def _delete_session(conn: sqlite3.Connection, session_id: str, seals: SQLiteSeals) -> bool:
    conn.execute("DELETE FROM records WHERE session_id = ?", (session_id,))
    seals.forget(conn, session_id)
    return conn.execute("DELETE FROM sessions WHERE session_id = ?", (session_id,)).rowcount > 0


def _session_starts(conn: sqlite3.Connection) -> list[tuple[str, float]]:
    rows: list[tuple[str, float]] = conn.execute(_SELECT_STARTS).fetchall()
    return rows


def _list_sessions(conn: sqlite3.Connection) -> tuple[SessionInfo, ...]:
    # Most sessions share a handful of agent lists; decoding each text once saves ~0.4 s
    # per 100,000 sessions.
    agent_lists: dict[str, tuple[str, ...]] = {}
    infos: list[SessionInfo] = []
    with _collector_paused():
        for row in conn.execute(_SELECT_SESSIONS):
            names = agent_lists.get(row[7])
            if names is None:
                names = agent_lists[row[7]] = tuple(json.loads(row[7]))
            infos.append(session_info(row, names))
    return tuple(infos)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a listing builds its objects: they are all
    kept, and each collection would walk every one built so far (a quarter of the time)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
