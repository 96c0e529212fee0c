"""The dev server helper says why a Temporal server would not start."""

from __future__ import annotations

import socket

import pytest

from swarmkit.exceptions import ConfigurationError
from swarmkit.temporal import dev_server


def test_a_taken_port_is_an_error_that_quotes_the_servers_reason() -> None:
    """The log lives in a folder removed on exit, so its end is in the message itself."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with (
            pytest.raises(ConfigurationError, match="address already in use"),
            dev_server(port=port),
        ):
            pass


def test_the_servers_state_is_a_wal_file(
    temporal_address: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Without a disk flush per commit the server keeps up with several workers on a shared
    disk; the SQLite header's read and write versions are 2 in WAL mode."""
    assert temporal_address
    (database,) = tmp_path_factory.getbasetemp().glob("temporal[0-9]*/temporal.db")
    header = database.read_bytes()[:20]
    assert header[:16] == b"SQLite format 3\x00"
    assert (header[18], header[19]) == (2, 2)
