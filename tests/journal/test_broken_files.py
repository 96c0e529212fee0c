"""Broken journal files: corrupt records, foreign files, read-only journals, failed writes."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from swarmkit import Agent, Swarm
from swarmkit.cli import main
from swarmkit.exceptions import JournalError
from swarmkit.journal import JournalRecord, SQLiteJournal, import_jsonl
from swarmkit.testing import ScriptedModel, text

Capture = pytest.CaptureFixture[str]


def _swarm(answer: str = "Done.") -> Swarm:
    return Swarm(
        [Agent(name="a", instructions="Be brief.")], "a", model=ScriptedModel(text(answer))
    )


def _journal_with_two_sessions(path: Path) -> None:
    """s1 and s2, each a whole run of a scripted model."""

    async def record() -> None:
        with SQLiteJournal(path) as journal:
            await _swarm().run("first?", journal=journal, session_id="s1")
            await _swarm().run("second?", journal=journal, session_id="s2")

    asyncio.run(record())


def _execute(path: Path, statement: str, *params: object) -> None:
    """One statement through a connection of its own, as another program would run it."""
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.execute(statement, params)
    finally:
        conn.close()


def _first_line(error: BaseException) -> str:
    return str(error).splitlines()[0]


def _cli_error(argv: list[str], capsys: Capture) -> str:
    """Run the command; it must fail with exit code 2 and one line on stderr, no traceback."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    return err.strip()


@pytest.fixture
def journal_path(tmp_path: Path) -> Iterator[Path]:
    """A journal holding two finished sessions, s1 and s2."""
    path = tmp_path / "j.sqlite"
    _journal_with_two_sessions(path)
    yield path


SUFFIX = "; the other sessions are unaffected: export them, or delete this one (journal.delete)"

CORRUPT_RECORDS = [
    pytest.param(
        "'{\"prompt\": '",
        "Expecting value: line 1 column 12 (char 11)",
        id="bad-json",
    ),
    pytest.param("'[1, 2]'", "its data is a JSON list, not an object", id="array"),
    pytest.param("'\"text\"'", "its data is a JSON str, not an object", id="string"),
    pytest.param("x'7b7d'", "its data is stored as bytes, not JSON text", id="blob"),
    pytest.param("42", "its data is a JSON int, not an object", id="number"),
    pytest.param(
        "'" + "[" * 100_000 + "]" * 100_000 + "'",
        "its JSON is nested too deeply to read",
        id="deep",
    ),
]


@pytest.mark.parametrize(("stored", "detail"), CORRUPT_RECORDS)
async def test_a_corrupt_record_names_its_session_and_seq(
    journal_path: Path, stored: str, detail: str
) -> None:
    """Reading the session is a JournalError naming the record; the other session reads."""
    _execute(journal_path, f"UPDATE records SET data = {stored} WHERE session_id='s1' AND seq=1")
    with SQLiteJournal(journal_path) as journal:
        with pytest.raises(JournalError) as caught:
            await journal.read("s1")
        other = await journal.read("s2")
        listed = await journal.sessions()

    expected = f"record 1 ('agent_started') of session 's1' is corrupt: {detail}{SUFFIX}"
    assert _first_line(caught.value) == expected
    assert [r.seq for r in other] == list(range(len(other)))
    assert {(s.session_id, s.status) for s in listed} == {("s1", "finished"), ("s2", "finished")}


@pytest.mark.parametrize("command", ["show", "export", "draw"])
def test_the_command_reports_a_corrupt_record_in_one_line(
    journal_path: Path, command: str, capsys: Capture
) -> None:
    """`show`, `export` and `draw --session` print one line naming the record; s2 still shows."""
    _execute(journal_path, "UPDATE records SET data = '[1]' WHERE session_id='s1' AND seq=0")
    argv = [command, "s1"] if command != "draw" else ["draw", "--session", "s1"]
    line = _cli_error([*argv, "--journal", str(journal_path)], capsys)

    assert line == (
        "swarmkit: error: record 0 ('run_started') of session 's1' is corrupt: its data is a "
        f"JSON list, not an object{SUFFIX}"
    )
    assert main(["show", "s2", "--journal", str(journal_path)]) == 0
    assert "second?" in capsys.readouterr().out


def test_sessions_lists_every_session_despite_a_corrupt_marker(
    journal_path: Path, capsys: Capture
) -> None:
    """A corrupt run_started hides its prompt from the list, nothing else."""
    _execute(journal_path, "UPDATE records SET data = '{' WHERE session_id='s1' AND seq=0")

    assert main(["sessions", "--journal", str(journal_path)]) == 0
    out = capsys.readouterr().out
    assert "s1" in out and "s2" in out and "second?" in out


@pytest.mark.parametrize(
    "data", [{}, {"prompt": 42}, {"prompt": "hi", "context": [1]}], ids=["none", "number", "ctx"]
)
async def test_a_run_started_without_a_prompt_cannot_be_replayed_or_resumed(
    journal_path: Path, data: dict[str, object]
) -> None:
    """replay() and resume() name the record instead of raising KeyError."""
    _execute(
        journal_path,
        "UPDATE records SET data = ? WHERE session_id='s1' AND seq=0",
        json.dumps(data),
    )
    expected = (
        "record 0 ('run_started') of session 's1' is corrupt: it holds no prompt text or no "
        f"context object{SUFFIX}"
    )
    with SQLiteJournal(journal_path) as journal:
        for attempt in (_swarm().replay("s1", journal), _swarm().resume("s1", journal)):
            with pytest.raises(JournalError) as caught:
                await attempt
            assert _first_line(caught.value) == expected
        assert len(await journal.read("s2")) > 0


MALFORMED_RESPONSES = [
    pytest.param(None, "TypeError: a response is an object", id="missing"),
    pytest.param(
        {"content": ["hi"], "tool_calls": [], "usage": {}, "finish_reason": None, "model": None},
        "ValueError: content must be text or null",
        id="content-list",
    ),
    pytest.param(
        {"content": "hi", "tool_calls": {}, "usage": {}, "finish_reason": None, "model": None},
        "ValueError: tool_calls must be a list",
        id="tool_calls-object",
    ),
    pytest.param(
        {
            "content": "hi",
            "tool_calls": [],
            "usage": {"total_tokens": "9"},
            "finish_reason": None,
            "model": None,
        },
        "ValueError: usage must map token counts to integers",
        id="usage-text",
    ),
    pytest.param({"content": "hi"}, "KeyError: 'tool_calls'", id="keys-missing"),
]


@pytest.mark.parametrize(("response", "detail"), MALFORMED_RESPONSES)
async def test_replaying_a_malformed_model_call_names_the_record(
    journal_path: Path, response: object, detail: str
) -> None:
    """A journaled response of the wrong shape stops replay with a JournalError, not a crash."""
    with SQLiteJournal(journal_path) as journal:
        records = await journal.read("s1")
        call = next(r for r in records if r.kind == "model_call")
        data = {**call.data, "response": response}
        _execute(
            journal_path,
            "UPDATE records SET data = ? WHERE session_id='s1' AND seq=?",
            json.dumps(data),
            call.seq,
        )
        with pytest.raises(JournalError) as caught:
            await _swarm().replay("s1", journal)
        assert (await _swarm().replay("s2", journal)).final_output == "Done."

    if detail == "TypeError: a response is an object":
        detail = "ValueError: a response is an object"
    assert _first_line(caught.value) == (
        f"record {call.seq} ('model_call') of session 's1' is corrupt: its response is "
        f"malformed ({detail}){SUFFIX}"
    )


# -- files that are not journals, or not journals we read -------------------------------------


def _foreign_sqlite(path: Path) -> None:
    _execute(path, "CREATE TABLE notes (body TEXT)")
    _execute(path, "INSERT INTO notes VALUES ('mine')")


def _text_file(path: Path) -> None:
    path.write_text("name,value\nthis is not a database, it is a CSV\n" * 50)


def _schema_version_word(path: Path) -> None:
    _journal_with_two_sessions(path)
    _execute(path, "UPDATE meta SET value = 'one' WHERE key = 'schema_version'")


def _lookalike(layout: str, *tables: str) -> Callable[[Path], None]:
    """Another program's file with a journal's meta table and other tables."""

    def make(path: Path) -> None:
        _execute(path, "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        _execute(path, "INSERT INTO meta VALUES ('schema_version', '1')")
        _execute(path, "INSERT INTO meta VALUES ('storage_layout', ?)", layout)
        for table in tables:
            _execute(path, f"CREATE TABLE {table}")

    return make


def _storage_layout_float(path: Path) -> None:
    _journal_with_two_sessions(path)
    _execute(path, "UPDATE meta SET value = '2.5' WHERE key = 'storage_layout'")


FOREIGN_FILES = [
    pytest.param(
        _foreign_sqlite,
        "{path} is an SQLite file but not a swarmkit journal; pick another path",
        id="other-sqlite",
    ),
    pytest.param(
        _text_file,
        "{path} is not a swarmkit journal (file is not a database); pick another path",
        id="text-file",
    ),
    pytest.param(
        _schema_version_word,
        "the journal at {path} is corrupt: its schema version is 'one', not a number; pick "
        "another path or restore the file from a copy",
        id="schema-version-word",
    ),
    pytest.param(
        _lookalike("3", "records (id INTEGER PRIMARY KEY, body TEXT)", "sessions (name TEXT)"),
        "{path} is an SQLite file but not a swarmkit journal (its records table lacks the "
        "columns data, kind, seq, session_id, written_at); pick another path",
        id="lookalike-records",
    ),
    pytest.param(
        _lookalike("2", "records (session_id, seq, kind, data, written_at)", "sessions (x)"),
        "{path} is an SQLite file but not a swarmkit journal (it has a sessions table, which "
        "storage layout 2 has not); pick another path",
        id="lookalike-layout-2",
    ),
    pytest.param(
        _lookalike("3", "records (session_id, seq, kind, data, written_at)"),
        "{path} is an SQLite file but not a swarmkit journal (it has no sessions table); pick "
        "another path",
        id="lookalike-no-sessions",
    ),
    pytest.param(
        _storage_layout_float,
        "the journal at {path} is corrupt: its storage layout is '2.5', not a number; pick "
        "another path or restore the file from a copy",
        id="storage-layout-float",
    ),
]


@pytest.mark.parametrize("read_only", [False, True], ids=["read-write", "read-only"])
@pytest.mark.parametrize(("make", "message"), FOREIGN_FILES)
def test_a_file_that_is_not_a_readable_journal_is_refused_unchanged(
    tmp_path: Path, make: object, message: str, read_only: bool
) -> None:
    """The open fails with what to do, and not one byte of the file changes.

    Opened read-write, no WAL file appears either; read-only, SQLite may leave the empty
    ``-wal``/``-shm`` files of a reader behind where the folder is writable.
    """
    path = tmp_path / "other.db"
    make(path)  # type: ignore[operator]
    before = path.read_bytes()
    siblings = sorted(p.name for p in tmp_path.iterdir())

    with pytest.raises(JournalError) as caught:
        SQLiteJournal(path, read_only=read_only)

    assert _first_line(caught.value) == message.format(path=path)
    assert path.read_bytes() == before
    if not read_only:
        assert sorted(p.name for p in tmp_path.iterdir()) == siblings


def test_the_command_refuses_a_foreign_file_in_one_line(tmp_path: Path, capsys: Capture) -> None:
    """`swarmkit sessions` on another program's database says so, and leaves it alone."""
    path = tmp_path / "other.db"
    _foreign_sqlite(path)
    before = path.read_bytes()

    line = _cli_error(["sessions", "--journal", str(path)], capsys)

    refusal = "is an SQLite file but not a swarmkit journal; pick another path"
    assert line == f"swarmkit: error: {path} {refusal}"
    assert path.read_bytes() == before


def _garble_pages(path: Path) -> None:
    """Scramble every byte after the first page, as a failing disk might."""
    data = bytearray(path.read_bytes())
    for at in range(4096, len(data)):
        data[at] = (data[at] * 7 + 13) % 256
    path.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:5000])


@pytest.mark.parametrize("damage", [_garble_pages, _truncate], ids=["garbled", "truncated"])
@pytest.mark.parametrize("command", ["sessions", "show", "export"])
def test_a_damaged_file_is_one_line_saying_what_to_do(
    journal_path: Path, damage: Callable[[Path], None], command: str, capsys: Capture
) -> None:
    """SQLITE_CORRUPT is reported with its hint, never a traceback."""
    damage(journal_path)
    argv = [command] if command == "sessions" else [command, "s1"]

    line = _cli_error([*argv, "--journal", str(journal_path)], capsys)

    assert line == (
        f"swarmkit: error: cannot open the journal at {journal_path}: database disk image is "
        "malformed (the file is damaged or its disk failed: copy what reads, then start a new "
        "journal)"
    )


# -- read-only journals ------------------------------------------------------------------------


@pytest.fixture
def read_only_journal(journal_path: Path) -> Iterator[Path]:
    """The two-session journal with its file mode 0444 and its folder 0555.

    Tests run as root in CI, where permissions do not stop a write; what they check is that
    reading never needs one: the journal's bytes stay as they were.
    """
    folder = journal_path.parent
    journal_path.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    folder.chmod(0o555)
    try:
        yield journal_path
    finally:
        folder.chmod(0o755)
        journal_path.chmod(0o644)


async def test_a_read_only_journal_reads_lists_and_replays(read_only_journal: Path) -> None:
    """read_only=True opens with SQLite's mode=ro: sessions, read and replay all work."""
    before = read_only_journal.read_bytes()

    with SQLiteJournal(read_only_journal, read_only=True) as journal:
        listed = await journal.sessions()
        records = await journal.read("s1")
        replayed = await _swarm().replay("s1", journal)

    assert [s.session_id for s in listed] == ["s2", "s1"]
    assert records[-1].kind == "run_finished"
    assert replayed.final_output == "Done."
    assert read_only_journal.read_bytes() == before


async def test_a_read_only_journal_refuses_a_write_with_what_to_do(read_only_journal: Path) -> None:
    """An append to a journal opened read-only is a JournalError that says so, chained."""
    record = JournalRecord(session_id="s3", seq=0, kind="run_started", data={"prompt": "x"})
    journal = SQLiteJournal(read_only_journal, read_only=True)
    with journal, pytest.raises(JournalError) as caught:
        await journal.append([record])

    assert _first_line(caught.value) == (
        f"cannot append to the journal at {read_only_journal}: attempt to write a readonly "
        "database (the journal is read-only: write to a writable copy, or read with "
        "read_only=True)"
    )
    assert isinstance(caught.value.__cause__, sqlite3.OperationalError)


@pytest.mark.parametrize("command", ["sessions", "show", "export"])
def test_the_read_commands_work_on_a_read_only_journal(
    read_only_journal: Path, command: str, capsys: Capture
) -> None:
    """`sessions`, `show` and `export` open read-only and leave the file as it was."""
    before = read_only_journal.read_bytes()
    argv = [command] if command == "sessions" else [command, "s1"]

    assert main([*argv, "--journal", str(read_only_journal)]) == 0

    assert "s1" in capsys.readouterr().out
    assert read_only_journal.read_bytes() == before


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(
            None, "cannot open the journal at {path} read-only: no such file", id="missing"
        ),
        pytest.param(b"", "{path} is empty, not a swarmkit journal; pick another path", id="empty"),
    ],
)
def test_read_only_needs_an_existing_journal(
    tmp_path: Path, make: bytes | None, message: str
) -> None:
    """read_only=True never creates a journal."""
    path = tmp_path / "j.sqlite"
    if make is not None:
        path.write_bytes(make)

    with pytest.raises(JournalError) as caught:
        SQLiteJournal(path, read_only=True)

    assert _first_line(caught.value) == message.format(path=path)
    assert path.exists() == (make is not None)


ROOT = Path(__file__).resolve().parents[2]
AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
_READ_AS_ANOTHER_USER = """
import asyncio, os, sys
from swarmkit.journal import SQLiteJournal

async def main() -> None:
    with SQLiteJournal(sys.argv[1], read_only=True) as journal:
        print(os.getuid(), [s.session_id for s in await journal.sessions()])
        print((await journal.read("s1"))[-1].kind)

asyncio.run(main())
"""
_COMMAND = "from swarmkit.cli import main; raise SystemExit(main())"


@pytest.fixture
def root_owned_journal(tmp_path: Path) -> Iterator[Path]:
    """The two-session journal owned by root, file 0444 in a folder 0555, in a folder any user
    can reach (pytest's own temporary folder is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="swarmkit-read-only-"))
    folder.chmod(0o755)
    path = folder / "j.sqlite"
    _journal_with_two_sessions(path)
    path.chmod(0o444)
    folder.chmod(0o555)
    try:
        yield path
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)


def _as_nobody(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*AS_NOBODY, sys.executable, *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="acting as another user needs root and setpriv",
)
def test_another_user_inspects_a_root_owned_read_only_journal(root_owned_journal: Path) -> None:
    """An unprivileged user lists and reads a journal it may not write, through the API and
    the command, and the file stays as it was."""
    before = root_owned_journal.read_bytes()
    folder = root_owned_journal.parent

    read = _as_nobody("-c", _READ_AS_ANOTHER_USER, str(root_owned_journal), cwd=folder)
    listed = _as_nobody(
        "-c", _COMMAND, "sessions", "--journal", str(root_owned_journal), cwd=folder
    )
    shown = _as_nobody(
        "-c", _COMMAND, "show", "s1", "--journal", str(root_owned_journal), cwd=folder
    )

    assert read.stdout.splitlines() == ["65534 ['s2', 's1']", "run_finished"], read.stderr
    assert listed.returncode == 0, listed.stderr
    assert "s1" in listed.stdout and "s2" in listed.stdout
    assert shown.returncode == 0, shown.stderr
    assert "first?" in shown.stdout
    assert root_owned_journal.read_bytes() == before


# -- failed writes -----------------------------------------------------------------------------


async def test_a_full_disk_is_reported_as_such_and_the_journal_stays_readable(
    journal_path: Path,
) -> None:
    """SQLITE_FULL (the file at its page limit) ends the run with the real cause, chained."""
    with SQLiteJournal(journal_path) as journal:
        pages = journal._conn.execute("PRAGMA page_count").fetchone()[0]  # type: ignore[union-attr]
        journal._conn.execute(f"PRAGMA max_page_count={pages}")  # type: ignore[union-attr]
        with pytest.raises(JournalError) as caught:
            await _swarm("x" * 200_000).run("big?", journal=journal, session_id="s3")
        readable = [len(await journal.read(s)) for s in ("s1", "s2")]

    assert _first_line(caught.value) == (
        f"cannot append to the journal at {journal_path}: database or disk is full (the disk is "
        "full or the file reached its size limit: free space, then resume)"
    )
    assert isinstance(caught.value.__cause__, sqlite3.OperationalError)
    assert all(count > 0 for count in readable)


async def test_a_locked_journal_is_reported_as_such(journal_path: Path) -> None:
    """Another connection holding the write lock past the timeout is named, not a seq error."""
    with SQLiteJournal(journal_path, timeout=0.05) as journal:
        other = sqlite3.connect(journal_path, isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")
        try:
            with pytest.raises(JournalError) as caught:
                await _swarm().run("locked?", journal=journal, session_id="s3")
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert len(await journal.read("s2")) > 0

    # The run's first write is taking its session's lease.
    assert _first_line(caught.value) == (
        f"cannot take a lease in the journal at {journal_path}: database is locked (another "
        "connection held the write lock for over 0.05 s: retry, or pass a longer timeout=)"
    )
    assert isinstance(caught.value.__cause__, sqlite3.OperationalError)


@pytest.mark.parametrize(
    ("value", "cause", "detail"),
    [
        (float("nan"), ValueError, "Out of range float values are not JSON compliant"),
        ({1, 2}, TypeError, "set is not JSON serializable"),
    ],
    ids=["nan", "set"],
)
async def test_a_value_json_cannot_hold_is_named_and_chained(
    journal_path: Path, value: object, cause: type[Exception], detail: str
) -> None:
    """The record, its kind and the encoder's reason; nothing is written."""
    record = JournalRecord(session_id="s3", seq=0, kind="note", data={"v": value})
    with SQLiteJournal(journal_path) as journal:
        with pytest.raises(JournalError) as caught:
            await journal.append([record])
        assert await journal.next_seq("s3") == 0

    assert _first_line(caught.value).startswith(
        f"record 0 ('note') of session 's3' holds data that is not JSON-safe ({detail}"
    )
    assert isinstance(caught.value.__cause__, cause)


# -- JSONL import ------------------------------------------------------------------------------

HEADER = '{"session_id": "s", "swarmkit_journal": 1}\n'

BAD_IMPORTS = [
    pytest.param(
        (HEADER + '{"data": ' + "[" * 100_000 + "]" * 100_000 + "}\n").encode(),
        "line 2: nested too deeply to read; a journal export never nests this deep",
        id="deep",
    ),
    pytest.param(
        (HEADER + '{"data": {"p": "caf').encode() + b'\xe9"}}\n',
        "line 2: not UTF-8 (byte 0xe9 at column 20); a journal export is UTF-8 text",
        id="latin-1",
    ),
    pytest.param(
        b"\xff\xfe{}",
        "line 1: not UTF-8 (byte 0xff at column 1); a journal export is UTF-8 text",
        id="utf-16",
    ),
    pytest.param(
        (HEADER + "[1, 2]\n").encode(), "line 2: expected a JSON object, got list", id="array"
    ),
]


@pytest.mark.parametrize(("raw", "message"), BAD_IMPORTS)
def test_a_bad_jsonl_file_is_a_one_line_journal_error(raw: bytes, message: str) -> None:
    """import_jsonl of a file's bytes names the line and what is wrong with it."""
    with pytest.raises(JournalError) as caught:
        import_jsonl(raw)

    assert str(caught.value) == message


# -- crashed runs ------------------------------------------------------------------------------


def test_show_of_a_crashed_run_says_it_is_open_and_where_it_stopped(
    journal_path: Path, capsys: Capture
) -> None:
    """No run_finished: the timeline says the run crashed or is running, and its last record."""
    _execute(journal_path, "DELETE FROM records WHERE session_id='s1' AND kind='run_finished'")

    assert main(["show", "s1", "--journal", str(journal_path)]) == 0

    out = capsys.readouterr().out
    assert "None" not in out
    assert "open     no run_finished: the run crashed, was killed, or is still running" in out
    assert "(model_call), 1 model call in; swarm.resume(session_id) continues it" in out


def test_show_of_a_run_that_raised_does_not_print_none(journal_path: Path, capsys: Capture) -> None:
    """A run_finished written as the run raised holds only the error; the line says so."""
    _execute(
        journal_path,
        "UPDATE records SET data = ? WHERE session_id='s1' AND kind='run_finished'",
        json.dumps({"stop_reason": "error", "error": "RuntimeError('boom')"}),
    )

    assert main(["show", "s1", "--journal", str(journal_path)]) == 0

    out = capsys.readouterr().out
    assert "None" not in out
    assert "stop     error: the run raised an exception" in out
    assert "error RuntimeError('boom')" in out


def test_show_of_records_of_odd_shapes_prints_them_as_data(
    journal_path: Path, capsys: Capture
) -> None:
    """A model_call whose response is a list, or whose usage is text, is shown as its data."""
    _execute(
        journal_path,
        "UPDATE records SET data = ? WHERE session_id='s1' AND kind='model_call'",
        json.dumps({"agent": "a", "turn": 1, "response": {"usage": {"total_tokens": "lots"}}}),
    )

    assert main(["show", "s1", "--journal", str(journal_path)]) == 0

    out = capsys.readouterr().out
    assert "tokens: unknown" in out


def test_text_that_is_not_valid_unicode_is_shown_with_replacement_characters(
    tmp_path: Path, capsys: Capture
) -> None:
    """show and sessions print U+FFFD for a lone surrogate; export keeps it exactly."""
    path = tmp_path / "j.sqlite"

    async def record() -> None:
        with SQLiteJournal(path) as journal:
            await _swarm("answer \udfff").run("why \ud800?", journal=journal, session_id="s")

    asyncio.run(record())
    journal = ["--journal", str(path)]

    assert main(["show", "s", *journal]) == 0
    shown = capsys.readouterr().out
    assert main(["sessions", *journal]) == 0
    listed = capsys.readouterr().out
    assert main(["export", "s", *journal]) == 0
    exported = capsys.readouterr().out

    assert "why \ufffd?" in shown and "answer \ufffd" in shown
    assert "why \ufffd?" in listed
    assert import_jsonl(exported)[0].data["prompt"] == "why \ud800?"
