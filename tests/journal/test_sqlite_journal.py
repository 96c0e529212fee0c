"""SQLiteJournal on disk: file format, schema versions, closing, rollback, threads and processes."""

from __future__ import annotations

import asyncio
import re
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from swarmkit.exceptions import JournalError
from swarmkit.journal import JOURNAL_SCHEMA_VERSION, JournalRecord, SQLiteJournal, _sqlite_file
from tests.journal.test_journal_contract import record, step

# Each writer imports, says "ready", and waits for "go", so all of them create the file and
# write at the same moment however long the imports took.
WRITER = """
import asyncio, sys
from swarmkit.journal import JournalRecord, SQLiteJournal

async def main(path, session_id, steps):
    print("ready", flush=True)
    sys.stdin.readline()
    with SQLiteJournal(path) as journal:
        for seq in range(steps):
            data = {"writer": session_id, "n": seq}
            record = JournalRecord(session_id=session_id, seq=seq, kind="k", data=data)
            await journal.append([record])

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""
STEPS_PER_WRITER = 300


def test_records_survive_closing_and_reopening_the_file(tmp_path: Path) -> None:
    """What one journal object wrote, a later one reads."""
    path = tmp_path / "j.sqlite3"
    with SQLiteJournal(path) as journal:
        asyncio.run(journal.append(step("s", 0, "run_started", "model_call")))
    with SQLiteJournal(path) as journal:
        assert asyncio.run(journal.read("s")) == tuple(step("s", 0, "run_started", "model_call"))
        assert asyncio.run(journal.next_seq("s")) == 2


async def test_the_file_is_in_wal_mode_with_its_schema_version(tmp_path: Path) -> None:
    """A new file is switched to WAL and records its schema version and layout in `meta`."""
    path = tmp_path / "j.sqlite3"
    SQLiteJournal(path).close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        assert meta == {
            "schema_version": str(JOURNAL_SCHEMA_VERSION),
            "storage_layout": str(_sqlite_file.STORAGE_LAYOUT),
        }
    finally:
        conn.close()


async def test_data_is_stored_as_compact_json_text(tmp_path: Path) -> None:
    """The data column holds compact, non-ASCII-escaped JSON a person can query."""
    path = tmp_path / "j.sqlite3"
    with SQLiteJournal(path) as journal:
        await journal.append([record("s", 0, text="é", items=[1, 2])])
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT data FROM records").fetchone() == (
            '{"text":"é","items":[1,2]}',
        )
    finally:
        conn.close()


def test_a_missing_parent_directory_is_a_clear_error(tmp_path: Path) -> None:
    """The error names the directory to create."""
    missing = tmp_path / "no" / "such"
    with pytest.raises(JournalError, match=re.escape(f"directory {missing} does not exist")):
        SQLiteJournal(missing / "j.sqlite3")


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    """A text file at the path is not mistaken for a journal."""
    path = tmp_path / "notes.txt"
    path.write_text("just some notes, long enough to look like a header " * 4)
    with pytest.raises(JournalError, match="not a swarmkit journal"):
        SQLiteJournal(path)


def test_an_sqlite_file_of_another_application_is_refused(tmp_path: Path) -> None:
    """A database without our meta table is left alone."""
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (name TEXT)")
    conn.close()
    with pytest.raises(JournalError, match="not a swarmkit journal"):
        SQLiteJournal(path)


def test_a_journal_of_a_newer_schema_is_refused_with_what_to_do(tmp_path: Path) -> None:
    """A file written by a newer swarmkit asks for an upgrade instead of misreading it."""
    path = tmp_path / "j.sqlite3"
    SQLiteJournal(path).close()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", ("99",))
    conn.close()
    with pytest.raises(JournalError, match=r"schema version 99.*upgrade swarmkit"):
        SQLiteJournal(path)


def test_a_journal_of_a_newer_storage_layout_is_refused_with_what_to_do(tmp_path: Path) -> None:
    """A file whose tables a newer swarmkit laid out asks for an upgrade."""
    path = tmp_path / "j.sqlite3"
    SQLiteJournal(path).close()
    execute_elsewhere(path, "UPDATE meta SET value = '99' WHERE key = 'storage_layout'")
    with pytest.raises(JournalError, match=r"storage layout 99.*upgrade swarmkit"):
        SQLiteJournal(path)


def test_a_journal_of_the_pre_release_layout_is_refused_with_what_to_do(tmp_path: Path) -> None:
    """A file with the old `sessions` table and no layout in `meta` is refused, not misread."""
    path = tmp_path / "j.sqlite3"
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
        conn.execute(
            "INSERT INTO meta VALUES ('schema_version', ?)", (str(JOURNAL_SCHEMA_VERSION),)
        )
        conn.execute("CREATE TABLE sessions (session_id TEXT NOT NULL UNIQUE)")
    conn.close()
    with pytest.raises(JournalError, match=r"storage layout 1.*pre-release.*start a new journal"):
        SQLiteJournal(path)


async def test_a_closed_journal_refuses_work(tmp_path: Path) -> None:
    """After close every call is a JournalError; closing twice is harmless."""
    journal = SQLiteJournal(tmp_path / "j.sqlite3")
    journal.close()
    journal.close()
    with pytest.raises(JournalError, match="closed"):
        await journal.append(step("s", 0, "run_started"))
    with pytest.raises(JournalError, match="closed"):
        await journal.sessions()


async def test_the_journal_closes_at_the_end_of_a_with_or_async_with_block(tmp_path: Path) -> None:
    """Both context-manager forms close the connection."""
    with SQLiteJournal(tmp_path / "a.sqlite3") as journal:
        pass
    with pytest.raises(JournalError, match="closed"):
        await journal.next_seq("s")
    async with SQLiteJournal(tmp_path / "b.sqlite3") as other:
        pass
    with pytest.raises(JournalError, match="closed"):
        await other.next_seq("s")


async def test_a_step_that_fails_inside_its_transaction_is_rolled_back(tmp_path: Path) -> None:
    """An SQLite failure after the step's first record was inserted leaves none of it behind."""
    path = tmp_path / "j.sqlite3"
    with SQLiteJournal(path) as journal:
        execute_elsewhere(
            path,
            "CREATE TRIGGER fail BEFORE INSERT ON records WHEN NEW.seq = 1"
            " BEGIN SELECT RAISE(ABORT, 'disk on fire'); END",
        )
        with pytest.raises(JournalError, match=r"cannot append to the journal.*disk on fire"):
            await journal.append(step("s", 0, "run_started", "model_call"))
        execute_elsewhere(path, "DROP TRIGGER fail")
        assert await journal.next_seq("s") == 0
        await journal.append(step("s", 0, "run_started"))
        assert len(await journal.read("s")) == 1


async def test_two_journal_objects_on_one_file_cannot_interleave_a_session(tmp_path: Path) -> None:
    """The seq check runs inside the write transaction, so a second writer fails loudly."""
    path = tmp_path / "j.sqlite3"
    with SQLiteJournal(path) as first, SQLiteJournal(path) as second:
        await first.append(step("s", 0, "run_started"))
        stale = await second.next_seq("s")
        await first.append(step("s", stale, "model_call"))
        with pytest.raises(JournalError, match="expects seq 2 next, got 1"):
            await second.append(step("s", stale, "model_call"))


async def test_a_journal_object_continues_after_another_appended_to_its_session(
    tmp_path: Path,
) -> None:
    """Each step checks the file, not what this object last wrote, so others' steps count."""
    path = tmp_path / "j.sqlite3"
    with SQLiteJournal(path) as first, SQLiteJournal(path) as second:
        await first.append(step("s", 0, "run_started"))
        await second.append(step("s", 1, "model_call"))
        with pytest.raises(JournalError, match="expects seq 2 next, got 1"):
            await first.append(step("s", 1, "model_call"))
        await first.append(step("s", 2, "run_finished"))
        assert [r.seq for r in await second.read("s")] == [0, 1, 2]


async def test_a_session_deleted_by_another_journal_object_cannot_get_a_gap(
    tmp_path: Path,
) -> None:
    """After another connection deletes the session, the writer's next step is refused."""
    path = tmp_path / "j.sqlite3"
    with SQLiteJournal(path) as writer, SQLiteJournal(path) as other:
        await writer.append(step("s", 0, "run_started", "model_call"))
        await other.delete("s")
        with pytest.raises(JournalError, match="expects seq 0 next, got 2"):
            await writer.append(step("s", 2, "model_call"))
        assert await writer.sessions() == ()


async def test_listing_reads_the_sessions_table_kept_by_each_step(tmp_path: Path) -> None:
    """Each step updates its session's row; listing reads those rows, not the records."""
    path = tmp_path / "j.sqlite3"
    with SQLiteJournal(path, clock=lambda: 5.0) as journal:
        await journal.append([record("s", 0, "run_started", prompt=7)])
        await journal.append([record("s", 1, "run_started", prompt="p"), record("s", 2)])
        execute_elsewhere(path, "DELETE FROM records")
        (info,) = await journal.sessions()
    assert (info.records, info.started_at, info.status, info.prompt) == (3, 5.0, "open", "p")


async def test_a_layout_2_journal_gains_its_sessions_table_on_open(tmp_path: Path) -> None:
    """A file without the sessions table is migrated in place: summaries derived from records."""
    path = tmp_path / "j.sqlite3"
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
        conn.executemany(
            "INSERT INTO meta VALUES (?, ?)",
            [("schema_version", str(JOURNAL_SCHEMA_VERSION)), ("storage_layout", "2")],
        )
        conn.execute(
            "CREATE TABLE records (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL,"
            " seq INTEGER NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL,"
            " written_at REAL NOT NULL, UNIQUE (session_id, seq))"
        )
        conn.executemany(
            "INSERT INTO records (session_id, seq, kind, data, written_at) VALUES (?, ?, ?, ?, ?)",
            [
                ("a", 0, "run_started", '{"prompt":"hi"}', 1.0),
                ("b", 0, "run_started", '{"prompt":"yo"}', 1.0),
                ("a", 1, "agent_started", '{"agent":"triage"}', 2.0),
                ("a", 2, "run_finished", '{"stop_reason":"final_output"}', 3.0),
            ],
        )
    conn.close()
    with SQLiteJournal(path) as journal:
        b, a = await journal.sessions()
        await journal.append([record("b", 1, "agent_started", agent="x")])
        assert (await journal.sessions())[0].agents == ("x",)
    assert (a.session_id, a.records, a.started_at, a.updated_at) == ("a", 3, 1.0, 3.0)
    assert (a.status, a.stop_reason, a.prompt, a.agents) == (
        "finished",
        "final_output",
        "hi",
        ("triage",),
    )
    assert (b.session_id, b.records, b.status, b.prompt) == ("b", 1, "open", "yo")
    layout = _query(path, "SELECT value FROM meta WHERE key = 'storage_layout'")
    assert layout == [(str(_sqlite_file.STORAGE_LAYOUT),)]


def test_threads_sharing_one_journal_write_their_sessions_completely(tmp_path: Path) -> None:
    """The connection lock lets several threads use one journal object."""
    journal = SQLiteJournal(tmp_path / "j.sqlite3")

    def write(session_id: str) -> None:
        for seq in range(50):
            asyncio.run(journal.append([record(session_id, seq)]))

    threads = [threading.Thread(target=write, args=(f"t{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    infos = asyncio.run(journal.sessions())
    journal.close()
    assert sorted((info.session_id, info.records) for info in infos) == [
        (f"t{i}", 50) for i in range(4)
    ]


async def test_processes_writing_different_sessions_to_one_file_lose_nothing(
    tmp_path: Path,
) -> None:
    """Three processes create and write one new file at once; every record lands."""
    path = tmp_path / "shared.sqlite3"
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), f"p{i}", str(STEPS_PER_WRITER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    for writer in writers:
        assert writer.stdout is not None
        assert writer.stdout.readline() == "ready\n"
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    for writer in writers:
        _, errors = writer.communicate(timeout=60)
        assert writer.returncode == 0, errors
    with SQLiteJournal(path) as journal:
        for i in range(3):
            records = await journal.read(f"p{i}")
            expected = [{"writer": f"p{i}", "n": n} for n in range(STEPS_PER_WRITER)]
            assert [r.data for r in records] == expected


def test_every_read_record_is_a_journal_record(tmp_path: Path) -> None:
    """read returns JournalRecord values, not raw rows."""
    with SQLiteJournal(tmp_path / "j.sqlite3") as journal:
        asyncio.run(journal.append(step("s", 0, "run_started")))
        assert all(isinstance(r, JournalRecord) for r in asyncio.run(journal.read("s")))


def execute_elsewhere(path: Path, statement: str) -> None:
    """Run one statement on the file through a connection of its own, as another program would."""
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.execute(statement)
    finally:
        conn.close()


def _query(path: Path, statement: str) -> list[tuple[object, ...]]:
    """The rows of one query, read through a connection of its own."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute(statement).fetchall()
    finally:
        conn.close()


async def test_read_paths_extracts_only_the_values_asked_for(tmp_path: Path) -> None:
    """One path gives its JSON text (None where absent), several a JSON array; other kinds
    give None; records that are not JSON leave the caller to read them whole."""
    records = [
        JournalRecord(session_id="b", seq=0, kind="call", data={"turn": 2, "u": {"n": 5}}),
        JournalRecord(session_id="a", seq=0, kind="call", data={"turn": 1, "s": "caf\u00e9"}),
        JournalRecord(session_id="a", seq=1, kind="note", data={"turn": 9}),
    ]
    with SQLiteJournal(tmp_path / "j.sqlite3") as journal:
        await journal.append(records[:1])
        await journal.append(records[1:])
        paths = {"call": ("$.turn", ("$.s", "$.u.n", "$.gone"))}
        assert await journal.read_paths(["b", "a", "missing"], paths) == [
            ("a", 0, "call", "1", '["caf\u00e9",null,null]'),
            ("a", 1, "note", None, None),
            ("b", 0, "call", "2", "[null,5,null]"),
        ]
        with sqlite3.connect(tmp_path / "j.sqlite3") as other:
            other.execute("UPDATE records SET data = 'not json' WHERE session_id = 'b'")
        assert await journal.read_paths(["a", "b"], paths) is None


async def test_session_starts_lists_each_session_id_and_start_time_in_id_order(
    tmp_path: Path,
) -> None:
    """The listing without summaries agrees with ``sessions()`` on ids and start times."""
    with SQLiteJournal(tmp_path / "j.sqlite3") as journal:
        assert await journal.session_starts() == []
        for session_id in ("b", "c", "a"):
            await journal.append([JournalRecord(session_id=session_id, seq=0, kind="x", data={})])
        infos = await journal.sessions()
        assert await journal.session_starts() == sorted(
            (info.session_id, info.started_at) for info in infos
        )
        assert [sid for sid, _ in await journal.session_starts()] == ["a", "b", "c"]
