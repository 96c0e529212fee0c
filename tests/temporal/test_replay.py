"""The determinism gate: a recorded SwarmWorkflow history replays against today's loop."""

from __future__ import annotations

from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from swarmkit.temporal import SwarmPlugin
from swarmkit.testing import NeverCalledModel
from tests.temporal.record_history import FIXTURE
from tests.temporal.swarms import support_swarm


async def test_the_recorded_support_session_replays_without_nondeterminism() -> None:
    """A loop change that alters a session's commands fails here, before it reaches a worker."""
    history = WorkflowHistory.from_json("support-fixture", FIXTURE.read_text(encoding="utf-8"))
    plugin = SwarmPlugin(
        swarms={"support": support_swarm()}, models={"scripted": NeverCalledModel()}
    )
    replayer = Replayer(workflows=[], plugins=[plugin])

    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)

    assert result.replay_failure is None
