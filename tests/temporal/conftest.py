"""A real Temporal dev server for the whole test session, on a free loopback port."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING
from urllib.parse import quote

import pytest

from swarmkit.temporal import dev_server

if TYPE_CHECKING:
    from tests.journal.postgres_server import PostgresServer


@pytest.fixture(scope="session")
def temporal_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The address of a dev server that lives for the session and is stopped by pid."""
    with dev_server(tmp_path_factory.mktemp("temporal")) as address:
        yield address


@pytest.fixture
def postgres_dsn(postgres_server: PostgresServer) -> str:
    """A DSN of a new, empty schema of the shared PostgreSQL server (the mirror's journal)."""
    import psycopg  # noqa: PLC0415 - only the Postgres mirror tests need it

    name = f"temporal_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    return f"{postgres_server.dsn}?options={quote(f'-csearch_path={name}')}"
