"""Test-suite wide fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog


@pytest.fixture(autouse=True)
def _unconfigured_structlog() -> Iterator[None]:
    """Each test starts and ends with structlog unconfigured, as a library user's app would.

    ``structlog.testing.capture_logs()`` leaves structlog marked as configured, which would
    turn swarmkit's silent-by-default logging on for every later test.
    """
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()
