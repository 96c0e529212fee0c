"""PostgresJournal beyond the contract: many workers, leases across processes, bad input."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from swarmkit import Agent, Swarm
from swarmkit.exceptions import JournalError
from swarmkit.journal import AESGCMCipher, JournalRecord, PostgresJournal, open_journal
from swarmkit.journal import _postgres_schema as schema
from swarmkit.journal._postgres_schema import POSTGRES_SCHEMA_VERSION
from swarmkit.testing import ScriptedModel, text, transfer

from .conftest import fresh_schema
from .postgres_server import PostgresServer
from .postgres_worker import clerk_swarm

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "swarmkit"


def _worker(*args: str, clock_offset: float = 0.0) -> subprocess.Popen[str]:
    """A worker process of tests/journal/postgres_worker.py, its output piped; its lease
    clock runs ``clock_offset`` seconds ahead."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.journal.postgres_worker", *args],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "LEASE_CLOCK_OFFSET": str(clock_offset)},
    )


def _say(process: subprocess.Popen[str], line: str) -> None:
    """Write one line to the worker's stdin (what its ``wait_here`` tool returns)."""
    assert process.stdin is not None
    process.stdin.write(f"{line}\n")
    process.stdin.flush()


def _first_line(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    return process.stdout.readline().strip()


def _finish(process: subprocess.Popen[str]) -> int:
    """Wait for the process to end, close its pipe, and return its exit code."""
    process.communicate(timeout=120)
    return process.returncode


def _chat_swarm(model: ScriptedModel) -> Swarm:
    billing = Agent(name="billing", handoffs=[])
    return Swarm([Agent(name="triage"), billing], "triage", model=model)


def test_only_the_postgres_module_imports_psycopg() -> None:
    """psycopg stays behind the Postgres journal's and spend ledger's modules, like openai
    behind its adapter."""
    importers = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(name.split(".")[0] in {"psycopg", "psycopg_pool"} for name in names):
                importers.add(path.relative_to(PACKAGE).as_posix())
    assert importers == {
        "journal/_postgres.py",
        "journal/_postgres_pool.py",
        "journal/_postgres_seals.py",
        "ledger/_postgres.py",
    }


def test_importing_swarmkit_and_its_journal_loads_no_psycopg() -> None:
    """The extra loads on first use of PostgresJournal, not on import."""
    code = (
        "import sys, swarmkit, swarmkit.journal, swarmkit.cli\n"
        "assert not [m for m in sys.modules if m.startswith('psycopg')], sys.modules\n"
        "from swarmkit.journal import PostgresJournal\n"
        "assert 'psycopg' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_without_the_extra_a_postgres_url_says_what_to_install() -> None:
    """No psycopg: the command's one-line error names the extra, not an ImportError."""
    code = (
        "import sys\n"
        "sys.modules['psycopg'] = None\n"
        "from swarmkit.cli import main\n"
        "sys.exit(main(['sessions', '--journal', 'postgresql://u@127.0.0.1/db']))\n"
    )
    argv = [sys.executable, "-c", code]
    done = subprocess.run(argv, check=False, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2
    assert "pip install 'swarmkit-agents[postgres]'" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_run_sync_calls_each_get_a_fresh_loop_and_share_one_journal(postgres_dsn: str) -> None:
    """run_sync starts a loop per call; the journal serves each with its own pool."""
    journal = PostgresJournal(postgres_dsn)
    for n in range(3):
        model = ScriptedModel(transfer("billing"), text(f"done {n}"))
        swarm = _chat_swarm(model)
        assert swarm.run_sync("hi", session_id=f"s{n}", journal=journal).final_output == f"done {n}"
    infos = asyncio.run(journal.sessions())
    assert [(i.session_id, i.status, i.agents) for i in infos] == [
        (f"s{n}", "finished", ("triage", "billing")) for n in (2, 1, 0)
    ]


@pytest.mark.parametrize("connections", [1, 3])
async def test_many_sessions_in_one_loop_share_a_small_pool(
    postgres_dsn: str, connections: int
) -> None:
    """Thirty concurrent runs through one or three connections all complete and replay."""
    async with PostgresJournal(postgres_dsn, max_connections=connections) as journal:
        swarms = [_chat_swarm(ScriptedModel(transfer("billing"), text("ok"))) for _ in range(30)]
        results = await asyncio.gather(
            *(s.run("hi", session_id=f"c{n}", journal=journal) for n, s in enumerate(swarms))
        )
        assert {r.final_output for r in results} == {"ok"}
        replayed = await _chat_swarm(ScriptedModel()).replay("c7", journal)
        assert replayed.trail == ("triage", "billing")


@pytest.mark.slow
def test_four_processes_writing_fifty_sessions_each_lose_and_repeat_nothing(
    postgres_dsn: str,
) -> None:
    """Concurrent workers on one database: every record once, every session replays."""
    workers = [_worker("sessions", postgres_dsn, f"w{n}", "50") for n in range(4)]
    for worker in workers:
        assert _first_line(worker) == "done 50"
        assert _finish(worker) == 0

    async def check() -> None:
        async with PostgresJournal(postgres_dsn) as journal:
            infos = await journal.sessions()
            assert len(infos) == 200
            assert {(i.status, i.stop_reason) for i in infos} == {("finished", "final_output")}
            for info in infos:
                records = await journal.read(info.session_id)
                assert [r.seq for r in records] == list(range(info.records))
                result = await _chat_swarm(ScriptedModel()).replay(info.session_id, journal)
                assert result.final_output == "Refunded."

    asyncio.run(check())


def test_one_of_two_processes_gets_the_lease_and_a_third_takes_over_from_a_killed_holder(
    postgres_dsn: str,
) -> None:
    """Two at once: one holds, one is refused; SIGKILL the holder, its lease expires."""
    workers = [_worker("hold", postgres_dsn, "s", f"w{n}", "60") for n in (1, 2)]
    said = {worker: _first_line(worker) for worker in workers}
    (holder,) = [worker for worker, line in said.items() if line == "acquired"]
    (refused,) = [worker for worker in workers if worker is not holder]
    assert said[refused] == f"busy w{workers.index(holder) + 1}"
    assert _finish(refused) == 3
    os.kill(holder.pid, signal.SIGKILL)
    _finish(holder)
    still_held = _worker("take", postgres_dsn, "s", "w3", "30")
    assert _first_line(still_held) == f"busy w{workers.index(holder) + 1}"
    assert _finish(still_held) == 3
    # The dead holder never renews: once its 60 s have passed, the session is free.
    third = _worker("take", postgres_dsn, "s", "w3", "30", clock_offset=61)
    assert _first_line(third) == "acquired"
    assert _finish(third) == 0

    async def held_by() -> str:
        async with PostgresJournal(postgres_dsn) as journal:
            try:
                await journal.acquire_lease("s", owner="w4", ttl=30)
            except JournalError as exc:
                return str(getattr(exc, "owner", exc))
            return "nobody"

    assert asyncio.run(held_by()) == "w3"


def test_two_resumers_at_once_one_proceeds_and_a_third_finishes_after_the_killed_one(
    postgres_dsn: str,
) -> None:
    """Swarm.resume in two processes: one runs, one is busy; SIGKILL the runner mid-tool;
    once its lease expired a third resumes and finishes, and no model call ran twice."""
    limited = _worker("limited", postgres_dsn, "inv")
    assert _first_line(limited) == "usage_limit"
    assert _finish(limited) == 0
    resumers = [_worker("continue", postgres_dsn, "inv", "wait,answer") for _ in range(2)]
    said = {resumer: _first_line(resumer) for resumer in resumers}
    (runner,) = [resumer for resumer, line in said.items() if line == "in tool"]
    (refused,) = [resumer for resumer in resumers if resumer is not runner]
    assert said[refused].startswith("busy ") and f":{runner.pid}:" in said[refused]
    assert _finish(refused) == 3
    os.kill(runner.pid, signal.SIGKILL)  # mid-run: its model call is journaled, its tool not
    _finish(runner)
    too_soon = _worker("continue", postgres_dsn, "inv", "answer")
    assert f":{runner.pid}:" in _first_line(too_soon)
    assert _finish(too_soon) == 3
    third = _worker("continue", postgres_dsn, "inv", "answer", clock_offset=61)
    _say(third, "cleared")
    assert _first_line(third) == "in tool"  # the killed tool never finished: it runs again
    assert _first_line(third) == "All paid. clerk"
    assert _finish(third) == 0

    async def check() -> None:
        async with PostgresJournal(postgres_dsn) as journal:
            records = await journal.read("inv")
            assert [r.seq for r in records] == list(range(len(records)))
            calls = [
                (r.data["turn"], r.data["response"]) for r in records if r.kind == "model_call"
            ]
            assert [turn for turn, _ in calls] == [1, 2, 3]
            assert [[c["name"] for c in response["tool_calls"]] for _, response in calls] == [
                ["lookup"],
                ["wait_here"],
                [],
            ]
            tools = [(r.data["name"], r.data["outcome"]) for r in records if r.kind == "tool_call"]
            assert [name for name, _ in tools] == ["lookup", "wait_here"]
            assert "cleared" in json.dumps(tools[1][1])  # the third process's run of the tool
            (info,) = await journal.sessions()
            assert (info.status, info.stop_reason) == ("finished", "final_output")
            replayed = await clerk_swarm([], journal).replay("inv")
            assert replayed.final_output == "All paid."

    asyncio.run(check())


def test_a_run_paused_on_one_machine_is_approved_and_finished_on_another(
    postgres_dsn: str,
) -> None:
    """Process A pauses for approval; process B resumes the session and finishes it."""
    a = _worker("pause", postgres_dsn, "refund-1")
    assert _first_line(a) == "interrupted"
    assert _finish(a) == 0
    b = _worker("resume", postgres_dsn, "refund-1")
    assert _first_line(b) == "Refunded 50. triage>billing"
    assert _finish(b) == 0
    (info,) = asyncio.run(PostgresJournal(postgres_dsn).sessions())
    assert (info.status, info.stop_reason, info.agents) == (
        "finished",
        "final_output",
        ("triage", "billing"),
    )


@pytest.mark.parametrize("statement", ["TAKE_LEASE", "RELEASE_LEASE"])
def test_a_lease_skips_the_flush_wait_in_its_own_transaction_only(
    postgres_dsn: str, statement: str
) -> None:
    """Lease rows commit without waiting for the disk; the connection's steps still wait."""

    async def hold() -> None:
        async with PostgresJournal(postgres_dsn) as journal:
            await journal.acquire_lease("s", owner="w1", ttl=30)

    asyncio.run(hold())  # the statement below then renews or deletes a row: a write to commit
    params = {"session_id": "s", "owner": "w1", "ttl": 30.0, "now": None}
    args = params if statement == "TAKE_LEASE" else ("s", "w1")
    with psycopg.connect(postgres_dsn) as conn:
        conn.execute("SET synchronous_commit = on")  # the test server's default is off
        conn.commit()
        conn.execute(getattr(schema, statement), args)
        assert conn.execute("SHOW synchronous_commit").fetchone() == ("off",)
        conn.commit()
        assert conn.execute("SHOW synchronous_commit").fetchone() == ("on",)


def test_open_journal_picks_the_store_from_the_location(postgres_dsn: str, tmp_path: Path) -> None:
    """A postgresql:// URL opens Postgres; anything else is an SQLite path."""
    assert isinstance(open_journal(postgres_dsn), PostgresJournal)
    assert type(open_journal(str(tmp_path / "j.sqlite3"))).__name__ == "SQLiteJournal"


# -- bad input: one line that says what to do ------------------------------------------------


def _error_of(dsn: str) -> str:
    async def first_use() -> None:
        await PostgresJournal(dsn, connect_timeout=5).sessions()

    with pytest.raises(JournalError) as caught:
        asyncio.run(first_use())
    message = str(caught.value)
    assert "\n" not in message
    assert "swarmkit-test" not in message  # the password is never shown
    return message


def test_a_dsn_that_does_not_answer_says_to_check_the_server(
    postgres_server: PostgresServer,
) -> None:
    """Nothing listens on the port: the error names the place and the fix."""
    dsn = postgres_server.dsn.replace(str(postgres_server.port), str(_closed_port()))
    message = _error_of(dsn)
    assert "cannot connect to the journal at postgresql://postgres@127.0.0.1:" in message
    assert "check the host and port" in message


def test_wrong_credentials_say_to_check_the_user_and_password(
    postgres_server: PostgresServer,
) -> None:
    """A wrong password is named as such."""
    message = _error_of(postgres_server.dsn.replace("swarmkit-test", "wrong"))
    assert "password authentication failed" in message
    assert "check the user and password in the DSN" in message


def test_a_database_without_the_schema_and_no_right_to_create_it_says_what_to_grant(
    postgres_server: PostgresServer,
) -> None:
    """A user who may not create tables gets told how to get the schema created."""
    with psycopg.connect(postgres_server.dsn, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS locked")
        conn.execute("DROP ROLE IF EXISTS reader")
        conn.execute("CREATE ROLE reader LOGIN PASSWORD 'reader-pw'")
        conn.execute("CREATE DATABASE locked")
    dsn = f"postgresql://reader:reader-pw@127.0.0.1:{postgres_server.port}/locked"
    message = _error_of(dsn)
    assert "has no swarmkit journal tables" in message
    assert "GRANT CREATE ON SCHEMA public" in message


def test_a_schema_from_a_newer_swarmkit_is_refused(postgres_server: PostgresServer) -> None:
    """A database migrated by a later swarmkit is left alone."""
    dsn = fresh_schema(postgres_server)
    asyncio.run(PostgresJournal(dsn).sessions())
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO swarmkit_migrations (version) VALUES (%s)", (99,))
    message = _error_of(dsn)
    assert f"schema version 99, newer than this swarmkit reads ({POSTGRES_SCHEMA_VERSION})" in (
        message
    )
    assert "upgrade swarmkit" in message


async def test_a_schema_1_journal_is_migrated_and_goes_on_sealed(
    postgres_server: PostgresServer,
) -> None:
    """First-schema tables are migrated in place: old sessions read, new steps are chained."""
    dsn = fresh_schema(postgres_server)
    with psycopg.connect(dsn, autocommit=True) as conn:
        for statement in (*schema.MIGRATIONS[1], schema.CREATE_MIGRATIONS):
            conn.execute(statement)
        conn.execute(schema.RECORD_MIGRATION, (1,))
        conn.execute(
            "INSERT INTO swarmkit_sessions (session_id, records, started_at, updated_at,"
            " finished) VALUES ('old', 1, 0, 0, false)"
        )
        conn.execute(
            "INSERT INTO swarmkit_records VALUES ('old', 0, 'run_started', %s, 0)",
            ('{"prompt":"hi"}',),
        )
    cipher = AESGCMCipher({"k1": bytes(range(32))})
    step = [JournalRecord(session_id="old", seq=1, kind="note", data={"n": 1})]
    async with PostgresJournal(dsn, cipher=cipher) as journal:
        await journal.append(step)
        records = await journal.read("old")
    with psycopg.connect(dsn) as conn:
        versions = [row[0] for row in conn.execute("SELECT version FROM swarmkit_migrations")]
        stored = conn.execute("SELECT data FROM swarmkit_records WHERE seq = 1").fetchone()

    assert versions == [1, 2] and stored is not None and stored[0].startswith('{"chained":')
    assert [r.data for r in records] == [{"prompt": "hi"}, {"n": 1}]


def test_a_malformed_dsn_is_a_configuration_error() -> None:
    """A DSN psycopg cannot parse is refused at construction."""
    with pytest.raises(ValueError, match="invalid Postgres DSN"):
        PostgresJournal("postgresql://u@h/db?nosuchoption=1")


async def test_a_failed_step_writes_nothing(postgres_dsn: str) -> None:
    """A step refused for its seq leaves no record behind: a session is never partly written."""
    async with PostgresJournal(postgres_dsn) as journal:
        step = [JournalRecord(session_id="s", seq=0, kind="run_started", data={})]
        await journal.append(step)
        with pytest.raises(JournalError, match="expects seq 1 next, got 0"):
            await journal.append([*step, JournalRecord(session_id="s", seq=1, kind="k", data={})])
        assert len(await journal.read("s")) == 1


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port
