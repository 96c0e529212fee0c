"""The loop's structured logs: facts with the session, agent and turn bound; silent by default."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from swarmkit import Agent, Swarm
from swarmkit.testing import ScriptedModel, text, transfer


def _swarm() -> Swarm:
    model = ScriptedModel(transfer("b"), text("done"))
    return Swarm([Agent(name="a"), Agent(name="b")], "a", model=model)


async def test_run_logs_its_facts_with_session_agent_and_turn() -> None:
    """run_started, handoff_performed and run_finished carry their context as keys."""
    with capture_logs() as logs:
        await _swarm().run("x", session_id="s1")

    events = [entry["event"] for entry in logs]
    assert events == ["run_started", "handoff_performed", "run_finished"]
    handoff = logs[1]
    assert (handoff["session_id"], handoff["agent"], handoff["turn"]) == ("s1", "b", 1)
    assert (handoff["source"], handoff["target"], handoff["decided_by"]) == ("a", "b", "llm")
    assert logs[2]["stop_reason"] == "final_output"


async def test_library_prints_nothing_while_structlog_is_unconfigured(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An application that never configures structlog gets no output from swarmkit."""
    await _swarm().run("x")

    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
