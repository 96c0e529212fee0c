"""A demotion in the rules log holds for resumed and forked runs too, not only new ones."""

from __future__ import annotations

from pathlib import Path

from swarmkit import Agent, HandoffGraph, Swarm, approve, tool
from swarmkit.journal import SQLiteJournal
from swarmkit.shadow import DEMOTED, SKIPPED_RECORD, RuleAudit, log_rule_change
from swarmkit.testing import ScriptedModel, text, tool_call, transfer

BILLING = "triage -> billing if category == 'billing'"
FORK_AT = 2
"""The step after intake's handoff to triage (its records: the model call, then the handoff)."""


def _swarm(journal: SQLiteJournal, model: ScriptedModel) -> Swarm:
    """Intake checks the account (a person approves), then hands to triage, whose active
    rule sends billing tickets to billing; audited (share 0: it only reads demotions)."""

    @tool(needs_approval=True)
    def check_account(customer: str) -> str:
        """Look the customer up."""
        return f"{customer}: ok"

    graph = HandoffGraph()
    graph.add_edge("triage", "billing", "category == 'billing'")
    agents = [
        Agent(name="intake", tools=[check_account], handoffs=["triage"]),
        Agent(name="triage", handoffs=["billing", "sales"]),
        Agent(name="billing"),
        Agent(name="sales"),
    ]
    return Swarm(
        agents,
        "intake",
        graph=graph,
        journal=journal,
        model=model,
        audit=RuleAudit(share=0.0),
    )


async def _pause(journal: SQLiteJournal, session_id: str) -> None:
    swarm = _swarm(journal, ScriptedModel(tool_call("check_account", customer="C-1")))
    result = await swarm.run("help", context={"category": "billing"}, session_id=session_id)
    assert result.stop_reason == "interrupted"


async def test_a_resumed_run_reads_the_demotion(tmp_path: Path) -> None:
    """Two sessions paused at intake; resumed before the demotion, the rule routes; after it,
    the resumed run lets the model decide at triage and journals the skipped rule."""
    journal = SQLiteJournal(tmp_path / "journal.sqlite3")
    await _pause(journal, "before")
    await _pause(journal, "after")

    model = ScriptedModel(transfer("triage"), text("Billing here."))
    result = await _swarm(journal, model).resume("before", decision=approve(by="dana"))
    assert result.trail == ("intake", "triage", "billing")
    assert result.handoffs[-1].decided_by == "rule"

    await log_rule_change(journal, DEMOTED, {"rule": BILLING, "by": "test"}, at=0.0)
    model = ScriptedModel(transfer("triage"), transfer("sales"), text("Sales here."))
    result = await _swarm(journal, model).resume("after", decision=approve(by="dana"))
    assert result.trail == ("intake", "triage", "sales")
    assert result.handoffs[-1].decided_by == "llm"
    model.assert_exhausted()
    skipped = [r.data for r in await journal.read("after") if r.kind == SKIPPED_RECORD]
    assert skipped == [{"agent": "triage", "rule": BILLING}]


async def test_a_forked_run_reads_the_demotion(tmp_path: Path) -> None:
    """A session the rule routed to billing, forked after intake's handoff once the rule is
    demoted: the fork's triage turn goes to the model."""
    journal = SQLiteJournal(tmp_path / "journal.sqlite3")
    swarm = _swarm(journal, ScriptedModel(transfer("triage"), text("Billing here.")))
    first = await swarm.run("help", context={"category": "billing"}, session_id="routed")
    assert first.trail == ("intake", "triage", "billing")

    await log_rule_change(journal, DEMOTED, {"rule": BILLING, "by": "test"}, at=0.0)
    model = ScriptedModel(transfer("sales"), text("Sales here."))
    fork = await _swarm(journal, model).fork("routed", at=FORK_AT, fork_session_id="forked")
    assert fork.trail == ("intake", "triage", "sales")
    assert fork.handoffs[-1].decided_by == "llm"
    model.assert_exhausted()
