"""An SQLite journal file: opening it (WAL, crash-safe settings), creating, checking and
migrating its tables, and the transaction and error helpers every write to it shares."""

from __future__ import annotations

import json
import sqlite3
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from swarmkit.exceptions import JournalError
from swarmkit.journal._records import (
    AGENT_STARTED,
    JOURNAL_SCHEMA_VERSION,
    RUN_FINISHED,
    RUN_STARTED,
    JournalRecord,
    decode_data,
    step_facts,
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

INSERT_SESSION = (
    "INSERT INTO sessions (session_id, records, started_at, updated_at, finished, stop_reason,"
    " prompt, agents) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)

# Layout 2 files are migrated by deriving each session's summary from its records: count and
# times from the first and last record (index lookups), creation order from the first's id.
_DERIVE_SESSIONS = (
    "SELECT g.session_id, g.last + 1, f.written_at, l.written_at"
    " FROM (SELECT session_id, max(seq) AS last FROM records GROUP BY session_id) AS g"
    " JOIN records AS f ON f.session_id = g.session_id AND f.seq = 0"
    " JOIN records AS l ON l.session_id = g.session_id AND l.seq = g.last"
    " ORDER BY f.written_at, f.id"
)

# Prompt, stop reason and agents come from these records. `kind` has no index, so this scans
# the table; they are sorted in Python, as ORDER BY would walk the index and look up every
# record instead.
_SELECT_MARKERS = "SELECT session_id, seq, kind, data FROM records WHERE kind IN (?, ?, ?)"


def is_busy(exc: sqlite3.Error) -> bool:
    return (exc.sqlite_errorname or "").startswith(("SQLITE_BUSY", "SQLITE_LOCKED"))


def failure_hint(exc: sqlite3.Error, timeout: float) -> str:
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


def in_transaction(conn: sqlite3.Connection, work: Callable[[sqlite3.Connection], _T]) -> _T:
    # IMMEDIATE takes the write lock up front, so a step's seq check and its inserts are atomic
    # against other processes; waiting for that lock is bounded by the busy timeout.
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = work(conn)
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return result


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
            INSERT_SESSION,
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


def rollback(conn: sqlite3.Connection) -> None:
    # SQLite may already have rolled back on its own (e.g. disk full); a second ROLLBACK would
    # raise and hide the error that matters.
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def connect(path: Path, timeout: float) -> sqlite3.Connection:
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
        in_transaction(conn, lambda conn: _create_or_check_schema(conn, path))
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


def connect_read_only(path: Path, timeout: float) -> sqlite3.Connection:
    """Open an existing journal with SQLite's ``mode=ro``: no write, no WAL switch, no schema."""
    if not path.is_file():
        raise JournalError(f"cannot open the journal at {path} read-only: no such file")
    try:
        return _open_read_only(path, timeout, immutable=False)
    except sqlite3.Error as exc:
        if exc.sqlite_errorname not in _NO_SHARED_MEMORY:
            raise _open_error(path, exc, timeout) from exc
    # A WAL journal in a folder we may not write, with no -wal/-shm files to share: SQLite can
    # read it only as immutable (nobody can be writing it through this folder anyway).
    try:
        return _open_read_only(path, timeout, immutable=True)
    except sqlite3.Error as exc:
        raise _open_error(path, exc, timeout) from exc


# What SQLite says when it cannot create a WAL journal's -shm file beside it: CANTOPEN, or
# READONLY_DIRECTORY for another user's file in a folder this user may not write.
_NO_SHARED_MEMORY = frozenset({"SQLITE_CANTOPEN", "SQLITE_READONLY_DIRECTORY"})


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
    return JournalError(f"cannot open the journal at {path}: {exc}{failure_hint(exc, timeout)}")


def _configure(conn: sqlite3.Connection, timeout: float) -> None:
    # WAL lets readers and a writer work at once and keeps the file consistent if a process
    # dies mid-write: an unfinished transaction in the log is simply ignored on next open.
    enable_wal(conn, timeout)
    # NORMAL syncs the log only at checkpoints, not on every commit. A killed process loses
    # nothing committed; only a power loss or OS crash can drop the last steps still in the
    # OS cache, and even then the file is never corrupt. FULL would fsync every step.
    conn.execute("PRAGMA synchronous=NORMAL")


def enable_wal(conn: sqlite3.Connection, timeout: float) -> None:
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
    if layout < 2:
        raise JournalError(
            f"the journal at {path} has storage layout {layout}, written by a pre-release "
            f"swarmkit; this swarmkit reads layout {STORAGE_LAYOUT} only: move the file aside "
            "and start a new journal"
        )
    _check_shape(conn, path, tables, layout)
    if layout == 2 and read_only:
        raise JournalError(
            f"the journal at {path} has storage layout 2 (no sessions table yet); open it once "
            "for writing (SQLiteJournal(path), or any swarmkit command that writes) to upgrade "
            "it in place, then read it"
        )
    if layout == 2 and migrate:
        _add_sessions_table(conn)


# The columns each table of a journal has (a table may have more); a layout-2 file has no
# sessions table yet, and the leases table appears with the first lease.
_COLUMNS = {
    "meta": frozenset({"key", "value"}),
    "records": frozenset({"session_id", "seq", "kind", "data", "written_at"}),
    "sessions": frozenset(
        {"session_id", "records", "started_at", "updated_at", "finished", "stop_reason"}
        | {"prompt", "agents"}
    ),
    "leases": frozenset({"session_id", "owner", "expires_at"}),
}


def _check_shape(conn: sqlite3.Connection, path: Path, tables: set[str], layout: int) -> None:
    """Refuse, by reading only, a file whose meta table looks like a journal's but whose
    tables do not: nothing in it is changed (no WAL switch, no migration) before this."""
    needed = {"meta", "records"} | ({"sessions"} if layout >= 3 else set())
    problem = next((f"it has no {name} table" for name in sorted(needed - tables)), None)
    if layout == 2 and "sessions" in tables:
        problem = "it has a sessions table, which storage layout 2 has not"
    for name in sorted(set(_COLUMNS) & tables):
        if problem is None:
            missing = _COLUMNS[name] - _columns(conn, name)
            if missing:
                problem = f"its {name} table lacks the columns {', '.join(sorted(missing))}"
    if problem is not None:
        raise JournalError(
            f"{path} is an SQLite file but not a swarmkit journal ({problem}); pick another path"
        )


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


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
