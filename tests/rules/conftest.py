"""Fixtures of the rules tests: a journal of each kind the rules read."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmkit.journal import Journal, PostgresJournal, SQLiteJournal
from tests.journal.conftest import fresh_schema
from tests.journal.postgres_server import PostgresServer


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Journal:
    """A fresh SQLite or Postgres journal."""
    if request.param == "postgres":
        server: PostgresServer = request.getfixturevalue("postgres_server")
        return PostgresJournal(fresh_schema(server))
    return SQLiteJournal(tmp_path / "journal.sqlite3")
