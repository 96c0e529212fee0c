"""A real Temporal dev server for the whole test session, on a free loopback port."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from swarmkit.temporal import dev_server


@pytest.fixture(scope="session")
def temporal_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The address of a dev server that lives for the session and is stopped by pid."""
    with dev_server(tmp_path_factory.mktemp("temporal")) as address:
        yield address
