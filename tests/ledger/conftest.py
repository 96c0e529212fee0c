"""Fixtures of the ledger tests: a store per test, as a SQLite file or an empty Postgres schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.journal.conftest import fresh_schema
from tests.journal.postgres_server import PostgresServer


@pytest.fixture
def postgres_dsn(postgres_server: PostgresServer) -> str:
    """A DSN of an empty schema of its own."""
    return fresh_schema(postgres_server)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a ledger keeps spend: a SQLite file, or the embedded Postgres."""
    if request.param == "sqlite":
        return str(tmp_path / "spend.db")
    return str(request.getfixturevalue("postgres_dsn"))
