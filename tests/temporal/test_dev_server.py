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
