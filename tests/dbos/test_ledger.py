"""A spend ledger under DBOS: each reservation and settlement is a recorded step, charged once."""

from __future__ import annotations

import asyncio
from pathlib import Path

from dbos import DBOS

from swarmkit import Agent, Budget, Ledger, Swarm, tool
from swarmkit.dbos import DurableSwarms
from swarmkit.testing import ScriptedModel, text, tool_call

LIMIT = 60.0


@tool
def look() -> str:
    """Look around."""
    return "seen"


def _swarm(ledger: Ledger, model: ScriptedModel) -> Swarm:
    return Swarm([Agent(name="a", tools=[look])], "a", model=model, ledger=ledger)


async def test_a_dbos_session_reserves_and_settles_each_call_once_as_steps(
    database_url: str, tmp_path: Path
) -> None:
    """Each model call is a reserve step, the call's step, then a settle step; the ledger
    holds exactly one charge per call."""
    ledger = Ledger(tmp_path / "spend.sqlite", [Budget(name="calls", limit=10, unit="calls")])
    swarms = {"s": _swarm(ledger, ScriptedModel(tool_call("look"), text("done")))}
    app = DurableSwarms(swarms, database_url=database_url, polling_interval=0.05)
    async with app:
        handle = await app.start_session("s", "x", session_id="spend-1")
        result = await asyncio.wait_for(handle.result(), LIMIT)
        steps = [s["function_name"] for s in await DBOS.list_workflow_steps_async("spend-1")]
    assert result.stop_reason == "final_output"
    assert steps == [
        "swarmkit.start",
        "swarmkit.ledger.reserve",
        "swarmkit.model",
        "swarmkit.ledger.settle",
        "swarmkit.tool",
        "swarmkit.ledger.reserve",
        "swarmkit.model",
        "swarmkit.ledger.settle",
    ]
    calls = await ledger.store.calls()
    assert len(calls) == 2
    assert {c.session_id for c in calls} == {"spend-1"}


async def test_a_dbos_session_stops_on_a_spent_budget_before_the_model_step(
    database_url: str, tmp_path: Path
) -> None:
    """The refusal is recorded as the reserve step; no model step follows."""
    ledger = Ledger(tmp_path / "spend.sqlite", [Budget(name="none", limit=0, unit="calls")])
    app = DurableSwarms(
        {"s": _swarm(ledger, ScriptedModel())}, database_url=database_url, polling_interval=0.05
    )
    async with app:
        handle = await app.start_session("s", "x", session_id="spend-2")
        result = await asyncio.wait_for(handle.result(), LIMIT)
        steps = [s["function_name"] for s in await DBOS.list_workflow_steps_async("spend-2")]
    assert result.stop_reason == "budget"
    assert steps == ["swarmkit.start", "swarmkit.ledger.reserve"]
    assert await ledger.store.calls() == []
