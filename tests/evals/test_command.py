"""`swarmkit eval`: live, replay and regrade from the command, with gates on the exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarmkit.cli import main

TASKS = str(Path("swarmkit/evals/support_desk/tasks.json").resolve())
SWARM = "swarmkit.evals.support_desk:offline_swarm"


def test_the_command_gates_on_pass_hat_and_replays_a_stored_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missed gate exits 1; replay and regrade of the stored run need no model."""
    journal = str(tmp_path / "evals.sqlite")
    base = ["eval", TASKS, "--journal", journal]
    assert (
        main(
            [*base, "--swarm", SWARM, "--trials", "2", "--run-id", "g1", "--min-pass-hat", "2=0.9"]
        )
        == 0
    )
    assert "pass^2" in capsys.readouterr().out
    assert main([*base, "--swarm", SWARM, "--replay", "g1", "--min-pass-rate", "0.99"]) == 1
    assert "gate missed: pass rate 0.955 < 0.99" in capsys.readouterr().err
    assert main([*base, "--regrade", "g1", "--report", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["mode"] == "regrade" and data["model_calls"] == 0
    assert main([*base, "--min-pass-hat", "two"]) == 2
