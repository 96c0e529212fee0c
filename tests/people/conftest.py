"""Fixtures of the people tests: an empty schema of the shared PostgreSQL server per test."""

from __future__ import annotations

import pytest

from tests.journal.conftest import fresh_schema
from tests.journal.postgres_server import PostgresServer


@pytest.fixture
def postgres_dsn(postgres_server: PostgresServer) -> str:
    """A DSN of an empty schema of its own."""
    return fresh_schema(postgres_server)
