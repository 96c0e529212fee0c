"""Test-suite wide fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
import structlog

if TYPE_CHECKING:
    from tests.journal.postgres_server import PostgresServer

pytest_plugins = ["pytester", "tests.network_fence"]


@pytest.fixture(autouse=True)
def _unconfigured_structlog() -> Iterator[None]:
    """Each test starts and ends with structlog unconfigured, as a library user's app would.

    ``structlog.testing.capture_logs()`` leaves structlog marked as configured, which would
    turn swarmkit's silent-by-default logging on for every later test.
    """
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the whole run (the journal and Temporal tests share it),
    started from the dev extra's binaries and stopped by pid at the end."""
    from tests.journal.postgres_server import running_postgres  # noqa: PLC0415 - on first use

    with running_postgres() as server:
        yield server
