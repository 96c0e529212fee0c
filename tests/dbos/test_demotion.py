"""A demotion in the shared rules log holds inside DBOS sessions, read in a recorded step."""

from __future__ import annotations

from pathlib import Path

from swarmkit import Agent, HandoffGraph, Swarm
from swarmkit.dbos import DurableSwarms
from swarmkit.journal import SQLiteJournal
from swarmkit.models import Model
from swarmkit.shadow import DEMOTED, SKIPPED_RECORD, RuleAudit, log_rule_change
from swarmkit.testing import NeverCalledModel, ScriptedModel, text, transfer

BILLING = "triage -> billing if category == 'billing'"


def _swarm(model: Model) -> Swarm:
    """Triage's active rule sends billing tickets to billing; audited with share 0 (it only
    reads demotions)."""
    graph = HandoffGraph()
    graph.add_edge("triage", "billing", "category == 'billing'")
    agents = [
        Agent(name=name, instructions=f"You are {name}.") for name in ("triage", "billing", "sales")
    ]
    return Swarm(agents, "triage", graph=graph, model=model, audit=RuleAudit(share=0.0))


async def _session(
    journal: SQLiteJournal, url: str, model: Model, session_id: str
) -> tuple[str, ...]:
    app = DurableSwarms(
        {"shop": _swarm(model)}, database_url=url, polling_interval=0.05, journal=journal
    )
    async with app:
        handle = await app.start_session(
            "shop", "help", context={"category": "billing"}, session_id=session_id
        )
        result = await handle.result()
    return tuple(h.decided_by for h in result.handoffs)


async def test_a_dbos_session_reads_the_shared_demotion_and_replays_alike(
    sqlite_url: str, tmp_path: Path
) -> None:
    """Before the demotion the rule routes the session; once the shared journal's rules log
    demotes it, the next session's triage turn goes to the model, the skipped rule is
    journaled, and a replay of the mirrored session makes no call and ends alike."""
    journal = SQLiteJournal(tmp_path / "journal.sqlite3")
    assert await _session(journal, sqlite_url, ScriptedModel(text("Billing.")), "s-0") == ("rule",)

    await log_rule_change(journal, DEMOTED, {"rule": BILLING, "by": "test"}, at=0.0)
    model = ScriptedModel(transfer("sales"), text("Sales here."))
    assert await _session(journal, sqlite_url, model, "s-1") == ("llm",)
    model.assert_exhausted()
    records = await journal.read("s-1")
    assert [r.data for r in records if r.kind == SKIPPED_RECORD] == [
        {"agent": "triage", "rule": BILLING}
    ]
    replayed = await _swarm(NeverCalledModel()).replay("s-1", journal)
    assert replayed.trail == ("triage", "sales")
