"""Session ids no store can hold are clear errors before anything is written (issue 33,
finding 7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmkit import Agent, ConfigurationError, SQLiteJournal, Swarm
from swarmkit.journal import Journal, PostgresJournal
from swarmkit.testing import ScriptedModel, text

BAD_ID = "ticket-\ud800"


def _swarm() -> Swarm:
    return Swarm([Agent(name="a")], "a", model=ScriptedModel(text("hi")))


async def _check_refused(journal: Journal) -> None:
    with pytest.raises(ConfigurationError, match="lone surrogate"):
        await _swarm().run("x", session_id=BAD_ID, journal=journal)
    with pytest.raises(ConfigurationError, match="lone surrogate"):
        await _swarm().resume(BAD_ID, journal)
    with pytest.raises(ConfigurationError, match="lone surrogate"):
        await journal.read(BAD_ID)
    assert await journal.sessions() == ()


async def test_sqlite_refuses_a_session_id_with_a_lone_surrogate(tmp_path: Path) -> None:
    """run, resume and read name the problem instead of raising UnicodeEncodeError."""
    with SQLiteJournal(tmp_path / "j.db") as journal:
        await _check_refused(journal)


async def test_postgres_refuses_a_session_id_with_a_lone_surrogate(postgres_dsn: str) -> None:
    """The same on Postgres, and nothing is written."""
    journal = PostgresJournal(postgres_dsn)
    try:
        await _check_refused(journal)
    finally:
        await journal.aclose()
