"""Audited active rules: sampled decisions ask the model too; drift demotes the rule for every
swarm sharing the journal; replay makes no call."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from swarmkit import Agent, HandoffGraph, Swarm
from swarmkit.exceptions import ConfigurationError
from swarmkit.journal import SQLiteJournal
from swarmkit.rules import status
from swarmkit.shadow import (
    AUDIT_RECORD,
    DEMOTED,
    RuleAudit,
    read_rules_log,
    read_verdicts,
)
from swarmkit.testing import NeverCalledModel, ScriptedModel, text, transfer

BILLING = "triage -> billing if category == 'billing'"


def _swarm(journal: SQLiteJournal, audit: RuleAudit, *, shadow: bool = False) -> Swarm:
    graph = HandoffGraph()
    graph.add_edge("triage", "billing", "category == 'billing'")
    kept = HandoffGraph.from_dict(graph.to_dict()) if shadow else None
    agents = [
        Agent(name=name, instructions=f"You are {name}.") for name in ("triage", "billing", "sales")
    ]
    return Swarm(
        agents,
        "triage",
        graph=graph,
        journal=journal,
        model=ScriptedModel(),
        audit=audit,
        shadow=kept,
    )


async def test_a_drifting_model_demotes_the_rule_for_a_second_swarm(tmp_path: Path) -> None:
    """Every decision audited: 10 agreements, then the model drifts to sales; the fourth
    disagreement puts the upper bound at 0.883 < 0.9, the rule is demoted, and a second swarm
    instance on the same journal file lets the model decide from its next turn."""
    path = tmp_path / "journal.sqlite3"
    audit = RuleAudit(share=1.0, threshold=0.9)
    first = _swarm(SQLiteJournal(path), audit)
    for index in range(14):
        said = "billing" if index < 10 else "sales"
        model = ScriptedModel(transfer(said), text("Done."))
        result = await first.with_model(model).run(
            "help", context={"category": "billing"}, session_id=f"a{index:02d}"
        )
        assert result.trail == ("triage", "billing")  # the rule's routing stands
        assert result.handoffs[0].decided_by == "rule"
        model.assert_exhausted()
    with SQLiteJournal(path) as reader:
        log = await read_rules_log(reader)
        audited = [r for r in await reader.read("a12") if r.kind == AUDIT_RECORD]
    [demotion] = [r for r in log if r.kind == DEMOTED]
    assert demotion.data["rule"] == BILLING
    assert demotion.data["evidence"]["audits"] == 14
    assert demotion.data["evidence"]["agreements"] == 10
    assert audited[0].data["model_target"] == "sales" and not audited[0].data["agrees"]

    second = _swarm(SQLiteJournal(path), audit, shadow=True)
    model = ScriptedModel(transfer("sales"), text("Sales here."))
    result = await second.with_model(model).run(
        "help", context={"category": "billing"}, session_id="b00"
    )
    assert result.trail == ("triage", "sales")
    assert result.handoffs[0].decided_by == "llm"
    with SQLiteJournal(path) as reader:  # kept in shadow too, it is judged again
        [shadowed] = await read_verdicts(reader, "b00")
    verdict = shadowed[0]
    assert (verdict.rule, verdict.fired, verdict.agrees) == (BILLING, True, False)

    replayed = await _swarm(SQLiteJournal(path), audit).with_model(NeverCalledModel()).replay("a12")
    assert replayed.trail == ("triage", "billing")
    report = await status(SQLiteJournal(path), second)
    billing = report.rule(BILLING)
    assert (billing.mode, billing.decided, billing.audits.fired) == ("active", 14, 14)
    assert billing.audits.agreements == 10
    assert (billing.evidence.fired, billing.evidence.agreements) == (15, 10)  # + b00's verdict
    assert [change["kind"] for change in billing.changes] == ["rule_demoted"]


async def test_a_warning_audit_never_demotes(tmp_path: Path) -> None:
    """on_drift='warn': the model disagrees every time, the rule keeps routing."""
    path = tmp_path / "journal.sqlite3"
    swarm = _swarm(SQLiteJournal(path), RuleAudit(share=1.0, threshold=0.9, on_drift="warn"))
    for index in range(6):
        model = ScriptedModel(transfer("sales"), text("Done."))
        result = await swarm.with_model(model).run(
            "help", context={"category": "billing"}, session_id=f"w{index}"
        )
        assert result.handoffs[0].decided_by == "rule"
    with SQLiteJournal(path) as reader:
        assert all(r.kind != DEMOTED for r in await read_rules_log(reader))


def test_sampling_is_the_same_in_another_process() -> None:
    """A hash of (session, turn), never Python's salted hash: two processes pick the same."""
    audit = RuleAudit(share=0.3)
    here = [audit.samples(f"s{i}", i % 5) for i in range(200)]
    code = (
        "from swarmkit.shadow import RuleAudit; a = RuleAudit(share=0.3); "
        "print(''.join('1' if a.samples(f's{i}', i % 5) else '0' for i in range(200)))"
    )
    there = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert there == "".join("1" if sampled else "0" for sampled in here)
    assert 40 < sum(here) < 80


@pytest.mark.parametrize("share", [-0.1, 1.5, float("nan"), True])
def test_an_audit_share_outside_zero_one_is_a_configuration_error(share: float) -> None:
    """The share is a probability."""
    with pytest.raises(ConfigurationError, match="share"):
        RuleAudit(share=share)
