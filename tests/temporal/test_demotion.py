"""A demotion in the worker journal's rules log holds inside Temporal sessions."""

from __future__ import annotations

import uuid
from pathlib import Path

from swarmkit import Agent, HandoffGraph, Swarm
from swarmkit.journal import SQLiteJournal
from swarmkit.models import Model
from swarmkit.shadow import DEMOTED, SKIPPED_RECORD, RuleAudit, log_rule_change
from swarmkit.temporal import session_result, start_session
from swarmkit.testing import NeverCalledModel, ScriptedModel, text, transfer
from tests.temporal.harness import running_worker

BILLING = "triage -> billing if category == 'billing'"


def _swarm(model: Model | None = None) -> Swarm:
    """Triage's active rule sends billing tickets to billing; audited with share 0 (it only
    reads demotions)."""
    graph = HandoffGraph()
    graph.add_edge("triage", "billing", "category == 'billing'")
    agents = [Agent(name=n, instructions=f"You are {n}.") for n in ("triage", "billing", "sales")]
    model = model or ScriptedModel(name="scripted")
    return Swarm(agents, "triage", graph=graph, model=model, audit=RuleAudit(share=0.0))


async def test_a_temporal_session_reads_the_worker_journals_demotion(
    temporal_address: str, tmp_path: Path
) -> None:
    """The rule demoted in the worker journal's rules log: the session's triage turn goes to
    the model, the skipped rule is mirrored, and a replay makes no call and ends alike."""
    session_id = f"demoted-{uuid.uuid4().hex[:8]}"
    model = ScriptedModel(transfer("sales"), text("Sales here."), name="scripted")
    async with (
        SQLiteJournal(tmp_path / "mirror.sqlite3") as mirror,
        running_worker(
            temporal_address, swarms={"shop": _swarm()}, models={"scripted": model}, journal=mirror
        ) as (client, queue),
    ):
        await log_rule_change(mirror, DEMOTED, {"rule": BILLING, "by": "test"}, at=0.0)
        handle = await start_session(
            client,
            "shop",
            "help",
            task_queue=queue,
            context={"category": "billing"},
            session_id=session_id,
        )
        result = await session_result(handle)
        records = await mirror.read(session_id)
        replayed = await _swarm(NeverCalledModel()).replay(session_id, mirror)
    assert result.trail == ("triage", "sales")
    assert [h.decided_by for h in result.handoffs] == ["llm"]
    model.assert_exhausted()
    assert [r.data for r in records if r.kind == SKIPPED_RECORD] == [
        {"agent": "triage", "rule": BILLING}
    ]
    assert replayed.trail == ("triage", "sales")
