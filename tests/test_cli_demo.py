"""The offline HandoffGraph demo of the `swarmkit` command."""

import pytest

from swarmkit.cli import main


def test_demo_routes_every_ticket_without_a_model(capsys: pytest.CaptureFixture[str]) -> None:
    """`swarmkit demo` explains which edge fired for each ticket."""
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "escalation" in out and "billing" in out and "human" in out


def test_unknown_command_is_a_usage_error() -> None:
    """Anything but `demo` exits with 2."""
    assert main(["fly"]) == 2
