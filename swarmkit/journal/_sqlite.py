"""SQLiteJournal: the embedded default journal, one WAL-mode SQLite file shared by processes."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import json
import os
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from swarmkit.exceptions import JournalError, SessionNotFoundError
from swarmkit.journal._group_commit import GroupCommit
from swarmkit.journal._records import (
    AGENT_STARTED,
    JOURNAL_SCHEMA_VERSION,
    RUN_FINISHED,
    RUN_STARTED,
    JournalRecord,
    Lease,
    SessionInfo,
    StepFacts,
    check_continues,
    check_lease_args,
    check_step,
    decode_data,
    decode_record,
    encode_data,
    merge_agents,
    step_facts,
    take_lease,
)

_T = TypeVar("_T")

STORAGE_LAYOUT = 3
"""The version of this file's tables, kept in ``meta`` beside the record schema version.

Layout 1 (pre-release) kept another ``sessions`` table; files in it are refused. Layout 2
had no summary table; opening such a file adds and fills the ``sessions`` table of layout 3.
"""

# One row per session, updated by each step, so listing never reads the records. Its rowid is
# the creation order that breaks ties between equal start times; `agents` is a JSON list.
_SESSIONS_SCHEMA = (
    "CREATE TABLE sessions (session_id TEXT NOT NULL UNIQUE, records INTEGER NOT NULL,"
    " started_at REAL NOT NULL, updated_at REAL NOT NULL, finished INTEGER NOT NULL,"
    " stop_reason TEXT, prompt TEXT, agents TEXT NOT NULL)",
    "CREATE INDEX sessions_newest ON sessions (started_at)",
)
_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    # Records (~600 bytes of JSON each) live in a rowid table: a step appends to the table's
    # rightmost page, and only the small (session_id, seq) index entries land at the session's
    # random place. Keyed WITHOUT ROWID by (session_id, seq), every new session split a random
    # leaf of big rows: a third more WAL pages per session and ~1.4x the time.
    "CREATE TABLE records (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL,"
    " seq INTEGER NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL, written_at REAL NOT NULL,"
    " UNIQUE (session_id, seq))",
    *_SESSIONS_SCHEMA,
)
_INSERT_RECORD = (
    "INSERT INTO records (session_id, seq, kind, data, written_at) VALUES (?, ?, ?, ?, ?)"
)
_SESSION_ROW = "SELECT records, agents FROM sessions WHERE session_id = ?"
_INSERT_SESSION = (
    "INSERT INTO sessions (session_id, records, started_at, updated_at, finished, stop_reason,"
    " prompt, agents) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_UPDATE_SESSION = (
    "UPDATE sessions SET records = records + ?, updated_at = ?, finished = finished OR ?,"
    " stop_reason = CASE WHEN ? THEN ? ELSE stop_reason END, prompt = coalesce(prompt, ?),"
    " agents = ? WHERE session_id = ?"
)
_SELECT_SESSIONS = (
    "SELECT session_id, records, started_at, updated_at, finished, stop_reason, prompt, agents"
    " FROM sessions ORDER BY started_at DESC, rowid DESC"
)
_SELECT_RECORDS = "SELECT seq, kind, data FROM records WHERE session_id = ? ORDER BY seq"
# Layout 2 files are migrated by deriving each session's summary from its records: count and
# times from the first and last record (index lookups), creation order from the first's id.
_DERIVE_SESSIONS = (
    "SELECT g.session_id, g.last + 1, f.written_at, l.written_at"
    " FROM (SELECT session_id, max(seq) AS last FROM records GROUP BY session_id) AS g"
    " JOIN records AS f ON f.session_id = g.session_id AND f.seq = 0"
    " JOIN records AS l ON l.session_id = g.session_id AND l.seq = g.last"
    " ORDER BY f.written_at, f.id"
)
# Created on the first lease, so opening a journal to read it never changes the file.
_CREATE_LEASES = (
    "CREATE TABLE IF NOT EXISTS leases (session_id TEXT PRIMARY KEY, owner TEXT NOT NULL,"
    " expires_at REAL NOT NULL) WITHOUT ROWID"
)
# Prompt, stop reason and agents come from these records. `kind` has no index, so this scans
# the table; they are sorted in Python, as ORDER BY would walk the index and look up every
# record instead.
_SELECT_MARKERS = "SELECT session_id, seq, kind, data FROM records WHERE kind IN (?, ?, ?)"


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
    ) -> None:
        """Open or create the journal at ``path``; its parent directory must exist.

        ``timeout`` is how many seconds a write waits for another process's write to finish.
        ``read_only=True`` opens an existing journal for reading only (sessions, read, replay),
        e.g. one on a read-only disk or owned by another user; it never changes the file.
        """
        self._path = Path(path)
        self._clock = clock
        self._timeout = timeout
        self._lock = threading.Lock()
        self.read_only = read_only
        """Whether this journal was opened for reading only."""
        self._conn: sqlite3.Connection | None = (
            _connect_read_only(self._path, timeout) if read_only else _connect(self._path, timeout)
        )
        self._commits = GroupCommit(
            connection=lambda: self._conn,
            lock=self._lock,
            timeout=timeout,
            failure=self._failure,
            closed=self._closed_error,
        )
        # Leases this object holds, by session: (owner, ttl). A run's finishing step gives its
        # lease up in the same transaction ("folded"), so the release that follows is free.
        self._held: dict[str, tuple[str, float]] = {}
        self._folded: dict[str, tuple[str, float]] = {}
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
        rows = [(session_id, r.seq, r.kind, encode_data(r), now) for r in records]
        facts = step_facts(records)
        folded = self._folded.get(session_id)
        lease = folded or self._held.get(session_id)
        release = lease is not None and facts.finished

        def work(conn: sqlite3.Connection) -> None:
            if folded is not None:  # written again after its finish: hold the lease again
                _take_lease(conn, session_id, folded[0], folded[1], now)
            _write_step(conn, rows, facts)
            if release and lease is not None:
                _release_lease(conn, session_id, lease[0])

        await self._commits.write("append to", work)
        if lease is not None:
            self._note_lease(session_id, lease, folded=release)

    async def read(self, session_id: str) -> tuple[JournalRecord, ...]:
        """Every record of the session in seq order."""
        rows = self._run(
            "read", lambda conn: conn.execute(_SELECT_RECORDS, (session_id,)).fetchall()
        )
        if not rows:
            raise SessionNotFoundError(session_id)
        return tuple(decode_record(session_id, seq, kind, data) for seq, kind, data in rows)

    async def sessions(self) -> tuple[SessionInfo, ...]:
        """A summary of every session, the latest started first."""
        return self._run("list sessions of", _list_sessions)

    async def next_seq(self, session_id: str) -> int:
        """The seq the session's next record must have; 0 for a new session."""
        return self._run("read", lambda conn: _next_seq(conn, session_id))

    async def delete(self, session_id: str) -> None:
        """Remove the session and its records in one transaction."""
        deleted = await self._commits.write(
            "delete from", lambda conn: _delete_session(conn, session_id)
        )
        if not deleted:
            raise SessionNotFoundError(session_id)

    async def acquire_lease(self, session_id: str, *, owner: str, ttl: float) -> None:
        """Take or renew the session's writer lease in the file, so other processes see it."""
        check_lease_args(owner, ttl)
        now = self._clock()
        create = not self._leases_table
        await self._commits.write(
            "take a lease in",
            lambda conn: _take_lease(conn, session_id, owner, ttl, now, create=create),
        )
        self._leases_table = True
        self._note_lease(session_id, (owner, ttl), folded=False)

    async def release_lease(self, session_id: str, *, owner: str) -> None:
        """Give up the lease if ``owner`` holds it."""
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
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> SQLiteJournal:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> SQLiteJournal:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteJournal({str(self._path)!r})"

    def _run(self, action: str, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """Read with ``work`` on the open connection under the lock; SQLite errors become
        JournalError. A read waits out a briefly busy file (e.g. another process's recovery)."""
        deadline = time.monotonic() + self._timeout
        while True:
            with self._lock:
                if self._conn is None:
                    raise self._closed_error(action)
                try:
                    return work(self._conn)
                except sqlite3.Error as exc:
                    if not _busy(exc) or time.monotonic() > deadline:
                        raise self._failure(action, exc) from exc
            time.sleep(0.001)

    def _failure(self, action: str, exc: sqlite3.Error) -> JournalError:
        error = JournalError(
            f"cannot {action} the journal at {self._path}: {exc}{_hint(exc, self._timeout)}"
        )
        error.__cause__ = exc
        return error

    def _closed_error(self, action: str) -> JournalError:
        return JournalError(f"cannot {action} the journal at {self._path}: it is closed")

    def _note_lease(self, session_id: str, lease: tuple[str, float], *, folded: bool) -> None:
        """After a commit: whether this object still holds the session's lease in the file."""
        self._held.pop(session_id, None)
        self._folded.pop(session_id, None)
        (self._folded if folded else self._held)[session_id] = lease


def _busy(exc: sqlite3.Error) -> bool:
    return (exc.sqlite_errorname or "").startswith(("SQLITE_BUSY", "SQLITE_LOCKED"))


def _hint(exc: sqlite3.Error, timeout: float) -> str:
    """What to do about a failed SQLite call, by its error code."""
    name = exc.sqlite_errorname or ""
    if name == "SQLITE_FULL":
        return " (the disk is full or the file reached its size limit: free space, then resume)"
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return (
            f" (another connection held the write lock for over {timeout:g} s: retry, or pass "
            "a longer timeout=)"
        )
    if name.startswith("SQLITE_READONLY"):
        return " (the journal is read-only: write to a writable copy, or read with read_only=True)"
    if name.startswith(("SQLITE_IOERR", "SQLITE_CORRUPT")):
        return (
            " (the file is damaged or its disk failed: copy what reads, then start a new journal)"
        )
    return ""


def _in_transaction(conn: sqlite3.Connection, work: Callable[[sqlite3.Connection], _T]) -> _T:
    # IMMEDIATE takes the write lock up front, so a step's seq check and its inserts are atomic
    # against other processes; waiting for that lock is bounded by the busy timeout.
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = work(conn)
        conn.execute("COMMIT")
    except BaseException:
        _rollback(conn)
        raise
    return result


def _write_step(
    conn: sqlite3.Connection, rows: list[tuple[str, int, str, str, float]], facts: StepFacts
) -> None:
    # Under the write lock, checking the first seq against the session's stored count both
    # refuses a second writer (an overlap) and a gap, whoever wrote or deleted in between. The
    # unique index alone catches an overlap but not a gap, e.g. after another connection
    # deleted the session.
    session_id, first_seq, now = rows[0][0], rows[0][1], rows[0][4]
    row = conn.execute(_SESSION_ROW, (session_id,)).fetchone()
    check_continues(session_id, 0 if row is None else int(row[0]), first_seq)
    if row is None:
        conn.execute(
            _INSERT_SESSION,
            (
                session_id,
                len(rows),
                now,
                now,
                facts.finished,
                facts.stop_reason,
                facts.prompt,
                json.dumps(facts.agents),
            ),
        )
    else:
        agents = json.dumps(merge_agents(tuple(json.loads(row[1])), facts.agents))
        conn.execute(
            _UPDATE_SESSION,
            (
                len(rows),
                now,
                facts.finished,
                facts.finished,
                facts.stop_reason,
                facts.prompt,
                agents,
                session_id,
            ),
        )
    conn.executemany(_INSERT_RECORD, rows)


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


def _delete_session(conn: sqlite3.Connection, session_id: str) -> bool:
    conn.execute("DELETE FROM records WHERE session_id = ?", (session_id,))
    return conn.execute("DELETE FROM sessions WHERE session_id = ?", (session_id,)).rowcount > 0


def _list_sessions(conn: sqlite3.Connection) -> tuple[SessionInfo, ...]:
    # Most sessions share a handful of agent lists; decoding each text once saves ~0.4 s
    # per 100,000 sessions.
    agent_lists: dict[str, tuple[str, ...]] = {}
    infos: list[SessionInfo] = []
    new = _new_session_info
    with _collector_paused():
        for session_id, records, started, updated, finished, reason, prompt, agents in conn.execute(
            _SELECT_SESSIONS
        ):
            names = agent_lists.get(agents)
            if names is None:
                names = agent_lists[agents] = tuple(json.loads(agents))
            status = "finished" if finished else "open"
            infos.append(new(session_id, records, started, updated, status, reason, prompt, names))
    return tuple(infos)


_INFO_FIELDS = (
    "session_id",
    "records",
    "started_at",
    "updated_at",
    "status",
    "stop_reason",
    "prompt",
    "agents",
)


def _session_info_builder() -> Callable[..., SessionInfo]:
    """SessionInfo from its fields in order, without the frozen ``__init__``'s eight
    ``object.__setattr__`` calls: each slot is filled through its descriptor, a third of a
    100,000-session listing. SessionInfo checks nothing on construction, so the result is
    the same object (tests compare both)."""
    names = [field.name for field in dataclasses.fields(SessionInfo)]
    if names != list(_INFO_FIELDS) or hasattr(SessionInfo, "__post_init__"):
        # SessionInfo changed shape: build it the ordinary way until this is updated.
        return lambda *values: SessionInfo(**dict(zip(_INFO_FIELDS, values, strict=True)))
    (
        set_id,
        set_records,
        set_started,
        set_updated,
        set_status,
        set_reason,
        set_prompt,
        set_agents,
    ) = (getattr(SessionInfo, name).__set__ for name in names)
    make = SessionInfo.__new__

    def build(*values: Any) -> SessionInfo:
        info = make(SessionInfo)
        set_id(info, values[0])
        set_records(info, values[1])
        set_started(info, values[2])
        set_updated(info, values[3])
        set_status(info, values[4])
        set_reason(info, values[5])
        set_prompt(info, values[6])
        set_agents(info, values[7])
        return info

    return build


_new_session_info = _session_info_builder()


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


def _add_sessions_table(conn: sqlite3.Connection) -> None:
    """Layout 2 to 3: create the sessions table and fill it from the records, oldest first."""
    for statement in _SESSIONS_SCHEMA:
        conn.execute(statement)
    summaries = conn.execute(_DERIVE_SESSIONS).fetchall()
    markers = conn.execute(_SELECT_MARKERS, (RUN_STARTED, RUN_FINISHED, AGENT_STARTED)).fetchall()
    by_session: dict[str, list[JournalRecord]] = {}
    for session_id, seq, kind, data in sorted(markers):
        record = JournalRecord(session_id=session_id, seq=seq, kind=kind, data=_lenient(data))
        by_session.setdefault(session_id, []).append(record)
    for session_id, count, started_at, updated_at in summaries:
        # Folding the whole session's markers as one step gives what appending folds step by
        # step: the first string prompt, the latest stop reason, each agent once.
        facts = step_facts(by_session.get(session_id, []))
        conn.execute(
            _INSERT_SESSION,
            (
                session_id,
                count,
                started_at,
                updated_at,
                facts.finished,
                facts.stop_reason,
                facts.prompt,
                json.dumps(facts.agents),
            ),
        )
    conn.execute("UPDATE meta SET value = ? WHERE key = 'storage_layout'", (str(STORAGE_LAYOUT),))


def _lenient(text: object) -> dict[str, Any]:
    """A marker's data for the migration; a corrupt one reads as empty, so one bad record
    does not hide every session (reading that session names it)."""
    try:
        return decode_data(text) if isinstance(text, str) else {}
    except ValueError:
        return {}


def _rollback(conn: sqlite3.Connection) -> None:
    # SQLite may already have rolled back on its own (e.g. disk full); a second ROLLBACK would
    # raise and hide the error that matters.
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def _connect(path: Path, timeout: float) -> sqlite3.Connection:
    """Open the file, set it up for crash-safe concurrent use, and check its schema version."""
    if not path.parent.is_dir():
        raise JournalError(
            f"cannot open the journal at {path}: directory {path.parent} does not exist; "
            "create it first"
        )
    try:
        # Autocommit mode (isolation_level=None): transactions are begun explicitly, one per step.
        conn = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise _open_error(path, exc, timeout) from exc
    try:
        # Read first: a file that holds something else is refused before WAL mode (or anything
        # else) would change a byte of it.
        _check_schema(conn, path, _tables(conn), read_only=False, migrate=False)
        _configure(conn, timeout)
        _in_transaction(conn, lambda conn: _create_or_check_schema(conn, path))
        # From now on a busy file never blocks the thread: writes wait on the event loop's
        # timer (GroupCommit), reads retry briefly.
        conn.execute("PRAGMA busy_timeout=0")
    except sqlite3.Error as exc:
        conn.close()
        raise _open_error(path, exc, timeout) from exc
    except BaseException:
        conn.close()
        raise
    return conn


def _connect_read_only(path: Path, timeout: float) -> sqlite3.Connection:
    """Open an existing journal with SQLite's ``mode=ro``: no write, no WAL switch, no schema."""
    if not path.is_file():
        raise JournalError(f"cannot open the journal at {path} read-only: no such file")
    try:
        return _open_read_only(path, timeout, immutable=False)
    except sqlite3.Error as exc:
        if exc.sqlite_errorname != "SQLITE_CANTOPEN":
            raise _open_error(path, exc, timeout) from exc
    # A WAL journal in a folder we may not write, with no -wal/-shm files to share: SQLite can
    # read it only as immutable (nobody can be writing it through this folder anyway).
    try:
        return _open_read_only(path, timeout, immutable=True)
    except sqlite3.Error as exc:
        raise _open_error(path, exc, timeout) from exc


def _open_read_only(path: Path, timeout: float, *, immutable: bool) -> sqlite3.Connection:
    uri = f"file:{urllib.parse.quote(str(path.resolve()))}?mode=ro"
    if immutable:
        uri += "&immutable=1"
    conn = sqlite3.connect(
        uri, uri=True, timeout=timeout, isolation_level=None, check_same_thread=False
    )
    try:
        _check_schema(conn, path, _tables(conn), read_only=True, migrate=False)
    except BaseException:
        conn.close()
        raise
    return conn


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _open_error(path: Path, exc: sqlite3.Error, timeout: float) -> JournalError:
    if exc.sqlite_errorname == "SQLITE_NOTADB":
        return JournalError(f"{path} is not a swarmkit journal ({exc}); pick another path")
    return JournalError(f"cannot open the journal at {path}: {exc}{_hint(exc, timeout)}")


def _configure(conn: sqlite3.Connection, timeout: float) -> None:
    # WAL lets readers and a writer work at once and keeps the file consistent if a process
    # dies mid-write: an unfinished transaction in the log is simply ignored on next open.
    _enable_wal(conn, timeout)
    # NORMAL syncs the log only at checkpoints, not on every commit. A killed process loses
    # nothing committed; only a power loss or OS crash can drop the last steps still in the
    # OS cache, and even then the file is never corrupt. FULL would fsync every step.
    conn.execute("PRAGMA synchronous=NORMAL")


def _enable_wal(conn: sqlite3.Connection, timeout: float) -> None:
    """Switch the file to WAL, retrying while other processes are switching the same new file."""
    # Switching needs an exclusive lock, and SQLite reports a clash with another connection
    # doing the same at once as "busy" without calling the busy handler, so wait here instead.
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorname != "SQLITE_BUSY" or time.monotonic() > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def _create_or_check_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Create the tables in a new file, or check an existing file holds a journal we read."""
    tables = _tables(conn)
    if tables:
        _check_schema(conn, path, tables, read_only=False, migrate=True)
        return
    for statement in _SCHEMA:
        conn.execute(statement)
    conn.executemany(
        "INSERT INTO meta (key, value) VALUES (?, ?)",
        [
            ("schema_version", str(JOURNAL_SCHEMA_VERSION)),
            ("storage_layout", str(STORAGE_LAYOUT)),
        ],
    )


def _check_schema(
    conn: sqlite3.Connection, path: Path, tables: set[str], *, read_only: bool, migrate: bool
) -> None:
    """Check a file holds a journal this swarmkit reads; an empty file is a new journal.

    ``migrate`` (inside the opening transaction) upgrades a layout-2 file in place.
    """
    if not tables:
        if read_only:
            raise JournalError(f"{path} is empty, not a swarmkit journal; pick another path")
        return
    meta: dict[str, object] = {}
    if "meta" in tables:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    if "schema_version" not in meta:
        raise JournalError(
            f"{path} is an SQLite file but not a swarmkit journal; pick another path"
        )
    version = _version_number(path, "schema version", meta["schema_version"])
    _check_not_newer(path, "schema version", version, JOURNAL_SCHEMA_VERSION)
    layout = _version_number(path, "storage layout", meta.get("storage_layout", "1"))
    _check_not_newer(path, "storage layout", layout, STORAGE_LAYOUT)
    if layout == 2 and read_only:
        raise JournalError(
            f"the journal at {path} has storage layout 2 (no sessions table yet); open it once "
            "for writing (SQLiteJournal(path), or any swarmkit command that writes) to upgrade "
            "it in place, then read it"
        )
    if layout == 2:
        if migrate:
            _add_sessions_table(conn)
    elif layout < STORAGE_LAYOUT:
        raise JournalError(
            f"the journal at {path} has storage layout {layout}, written by a pre-release "
            f"swarmkit; this swarmkit reads layout {STORAGE_LAYOUT} only: move the file aside "
            "and start a new journal"
        )


def _version_number(path: Path, what: str, raw: object) -> int:
    text = str(raw) if isinstance(raw, str | int) else ""
    if not text.isdigit() or len(text) > 9:
        raise JournalError(
            f"the journal at {path} is corrupt: its {what} is {raw!r:.40}, not a number; "
            "pick another path or restore the file from a copy"
        )
    return int(text)


def _check_not_newer(path: Path, what: str, found: int, supported: int) -> None:
    if found > supported:
        raise JournalError(
            f"the journal at {path} has {what} {found}, newer than this swarmkit reads "
            f"({supported}); upgrade swarmkit to open it"
        )
