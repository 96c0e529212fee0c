"""Fixtures of the journal tests: an empty schema of the shared PostgreSQL server per test."""

from __future__ import annotations

import itertools
from urllib.parse import quote

import psycopg
import pytest

from tests.journal.postgres_server import PostgresServer

_SCHEMAS = itertools.count()


def fresh_schema(server: PostgresServer) -> str:
    """A DSN whose tables land in a new, empty schema of the server's database."""
    name = f"t{next(_SCHEMAS)}"
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        conn.execute(f"CREATE SCHEMA {name}")
    return f"{server.dsn}?options={quote(f'-csearch_path={name}')}"


@pytest.fixture
def postgres_dsn(postgres_server: PostgresServer) -> str:
    """A DSN of an empty schema of its own, so each test starts from no journal."""
    return fresh_schema(postgres_server)
