"""Fixtures of the DBOS tests: a system database on SQLite or on the shared PostgreSQL server."""

from __future__ import annotations

import itertools
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.journal.postgres_server import PostgresServer

_DATABASES = itertools.count()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A DBOS system database in a fresh SQLite file."""
    return f"sqlite:///{tmp_path / 'dbos.sqlite'}"


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """A DBOS system database in a fresh database of the shared PostgreSQL server."""
    import psycopg  # noqa: PLC0415 - only the Postgres tests need it

    name = f"dbos_{next(_DATABASES)}_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(postgres_server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    base = postgres_server.dsn.rsplit("/", 1)[0]
    return f"{base}/{name}"


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str:
    """A fresh system database, on SQLite and on PostgreSQL."""
    return str(request.getfixturevalue(f"{request.param}_url"))
