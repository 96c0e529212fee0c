"""A spend ledger under Temporal: reservations and settlements are activities, charged once."""

from __future__ import annotations

import uuid
from pathlib import Path

from temporalio.worker import Replayer

from swarmkit import Agent, Budget, Ledger, Swarm, tool
from swarmkit.temporal import SwarmPlugin, session_result, start_session
from swarmkit.testing import NeverCalledModel, ScriptedModel, text, tool_call
from tests.temporal.harness import activity_counts, running_worker


@tool
def look() -> str:
    """Look around."""
    return "seen"


def _swarm(ledger: Ledger) -> Swarm:
    return Swarm([Agent(name="a", tools=[look])], "a", model="scripted", ledger=ledger)


async def test_each_call_is_reserved_and_settled_once_by_activities(
    temporal_address: str, tmp_path: Path
) -> None:
    """Two model calls: two reservations, two settlements, two charges in the ledger."""
    ledger = Ledger(tmp_path / "spend.sqlite", [Budget(name="calls", limit=10, unit="calls")])
    model = ScriptedModel(tool_call("look"), text("done"), name="scripted")
    async with running_worker(
        temporal_address, swarms={"s": _swarm(ledger)}, models={"scripted": model}
    ) as (client, queue):
        session_id = f"spend-{uuid.uuid4().hex[:8]}"
        handle = await start_session(client, "s", "x", task_queue=queue, session_id=session_id)
        result = await session_result(handle)
        history = await handle.fetch_history()
    assert result.stop_reason == "final_output"
    counts = activity_counts(history)
    assert counts["swarmkit.ledger.reserve"] == {"scheduled": 2, "completed": 2}
    assert counts["swarmkit.ledger.settle"] == {"scheduled": 2, "completed": 2}
    charged = await ledger.store.calls()
    assert [c.session_id for c in charged] == [session_id, session_id]

    # Replaying the workflow's history (a worker restart does this) charges nothing again.
    plugin = SwarmPlugin(swarms={"s": _swarm(ledger)}, models={"scripted": NeverCalledModel()})
    replayed = await Replayer(workflows=[], plugins=[plugin]).replay_workflow(
        history, raise_on_replay_failure=False
    )
    assert replayed.replay_failure is None
    assert len(await ledger.store.calls()) == 2
    windows = await ledger.store.windows(now=ledger.clock())
    assert [(w["spent"], w["held"]) for w in windows] == [(2, 0)]


async def test_a_spent_budget_stops_the_workflow_before_the_model_activity(
    temporal_address: str, tmp_path: Path
) -> None:
    """The refusal comes back from the reserve activity; no model activity is scheduled."""
    ledger = Ledger(tmp_path / "spend.sqlite", [Budget(name="none", limit=0, unit="calls")])
    model = ScriptedModel(name="scripted")
    async with running_worker(
        temporal_address, swarms={"s": _swarm(ledger)}, models={"scripted": model}
    ) as (client, queue):
        handle = await start_session(client, "s", "x", task_queue=queue)
        result = await session_result(handle)
        history = await handle.fetch_history()
    assert result.stop_reason == "budget"
    counts = activity_counts(history)
    assert "swarmkit.model" not in counts
    assert counts["swarmkit.ledger.reserve"] == {"scheduled": 1, "completed": 1}
