"""A run whose journal write failed gives its session's lease up, so a resume works at once
instead of waiting out the lease (issue 33, finding 4)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from swarmkit import Agent, JournalError, SQLiteJournal, Swarm, tool
from swarmkit.journal import Journal, PostgresJournal
from swarmkit.testing import ScriptedModel, text, tool_call

ROOT = Path(__file__).resolve().parents[2]


def _swarm(model: ScriptedModel, journal: Journal, step: object) -> Swarm:
    return Swarm([Agent(name="a", tools=[step])], "a", model=model, journal=journal)  # type: ignore[list-item]


async def test_a_sqlite_lock_timeout_releases_the_lease(tmp_path: Path) -> None:
    """A write that timed out on another process's lock leaves a session this journal can
    resume at once, once the lock is gone."""
    path = tmp_path / "journal.db"
    journal = SQLiteJournal(path, timeout=0.05)
    block = await _fail_on_a_held_lock(path, journal)

    resumed = await _swarm(ScriptedModel(text("done")), journal, block).resume("s")

    assert resumed.final_output == "done"


async def test_a_killed_postgres_backend_releases_the_lease(postgres_dsn: str) -> None:
    """pg_terminate_backend mid-run fails the run's next write; another worker resumes at once."""
    journal = PostgresJournal(postgres_dsn)
    kills: list[str] = []

    @tool
    def kill() -> str:
        """An operator kills every connection of the journal's database (once)."""
        if kills:
            return "killed"
        kills.append("killed")
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                "AND backend_type = 'client backend'"
            )
        return "killed"

    model = ScriptedModel(tool_call("kill"), text("unreached"))
    with pytest.raises(JournalError, match="cannot append to the journal"):
        await _swarm(model, journal, kill).run("go", session_id="s")

    other_worker = PostgresJournal(postgres_dsn)
    resumed = await _swarm(ScriptedModel(text("done")), other_worker, kill).resume("s")

    assert resumed.final_output == "done"
    await journal.aclose()
    await other_worker.aclose()


async def _fail_on_a_held_lock(path: Path, journal: SQLiteJournal) -> object:
    """A run of session "s" whose second step times out on another process's write lock,
    which is then let go; the run's tool, for the resume."""
    blockers: list[sqlite3.Connection] = []

    @tool
    def block() -> str:
        """Another process takes the journal's write lock (once)."""
        if not blockers:
            blocker = sqlite3.connect(path, isolation_level=None)
            blocker.execute("BEGIN IMMEDIATE")
            blockers.append(blocker)
        return "blocked"

    model = ScriptedModel(tool_call("block"), text("unreached"))
    with pytest.raises(JournalError, match="database is locked"):
        await _swarm(model, journal, block).run("go", session_id="s")
    blockers[0].rollback()
    blockers[0].close()
    return block


async def test_a_lock_timeout_leaves_a_session_another_handle_resumes_at_once(
    tmp_path: Path,
) -> None:
    """Another journal object on the same file resumes a run whose write timed out on a lock,
    without waiting out the failed run's lease."""
    path = tmp_path / "journal.db"
    block = await _fail_on_a_held_lock(path, SQLiteJournal(path, timeout=0.05))

    with SQLiteJournal(path) as other:
        resumed = await _swarm(ScriptedModel(text("done")), other, block).resume("s")

    assert resumed.final_output == "done"


async def test_a_lock_timeout_lease_is_released_in_the_file_when_its_journal_closes(
    tmp_path: Path,
) -> None:
    """Another process takes the session's lease at once after the failed run's journal is
    closed: the release the timed-out write could not make is written then."""
    path = tmp_path / "journal.db"
    journal = SQLiteJournal(path, timeout=0.05)
    await _fail_on_a_held_lock(path, journal)
    journal.close()

    taken = subprocess.run(
        [sys.executable, "-c", _TAKE_LEASE, str(path)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )

    assert taken.returncode == 0, taken.stderr


_TAKE_LEASE = """
import asyncio, sys
from swarmkit import SQLiteJournal
with SQLiteJournal(sys.argv[1]) as journal:
    asyncio.run(journal.acquire_lease("s", owner="another process", ttl=60))
"""
