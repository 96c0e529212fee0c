"""whatif --live: the sessions a rule routes differently, re-run against the swarm's model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from swarmkit import HandoffGraph
from swarmkit.cli import main
from swarmkit.exceptions import RuleLearningError
from swarmkit.journal import InMemoryJournal, SQLiteJournal
from swarmkit.rules import rerun_changed, suggest_rules, whatif
from swarmkit.testing import ScriptedModel, text
from tests.rules import routed


def _slipping(index: int, context: dict[str, object], session_id: str) -> str:
    """Billing tickets go to billing, but every fifth one to sales."""
    category = str(context["category"])
    return "sales" if category == "billing" and index % 5 == 0 else category


def _billing_rule() -> HandoffGraph:
    rules = HandoffGraph()
    rules.add_edge("triage", "billing", "category == 'billing'")
    return rules


async def test_changed_sessions_rerun_live_into_new_labelled_sessions() -> None:
    """Each slipped ticket re-runs from the rule's step: billing answers, one call each."""
    made = routed.tickets(40, route=_slipping)
    journal = await routed.journal_tickets(made, InMemoryJournal())
    report = await whatif(journal, _billing_rule())
    slipped = [t.session_id for t in made if t.target != t.context["category"]]
    model = ScriptedModel(per_agent={"billing": [text("Billing here.")] * len(slipped)})

    reruns = await rerun_changed(routed.swarm(model=model), journal, report)

    assert [r.session_id for r in reruns] == [s.session_id for s in report.changed] == slipped
    for rerun in reruns:
        assert rerun.rerun_id == f"{rerun.session_id}__whatif_{rerun.step}"
        assert (rerun.journaled, rerun.trail) == (("triage", "sales"), ("triage", "billing"))
        assert (rerun.stop_reason, rerun.model_calls, rerun.existing) == ("final_output", 1, False)
        records = await journal.read(rerun.rerun_id)
        handoff = next(r for r in records if r.kind == "handoff")
        assert (handoff.data["target"], handoff.data["decided_by"]) == ("billing", "rule")
        original = await journal.read(rerun.session_id)
        assert [r.kind for r in records[: rerun.step]] == [r.kind for r in original[: rerun.step]]
    model.assert_exhausted()  # the journaled steps replayed: triage was never asked again


async def test_a_second_rerun_reads_the_first_back_and_the_corpus_leaves_them_out() -> None:
    """Re-running again calls no model; suggest and whatif never count the re-runs."""
    made = routed.tickets(200, route=_slipping)
    journal = await routed.journal_tickets(made, InMemoryJournal())
    report = await whatif(journal, _billing_rule())
    first = await rerun_changed(routed.answering(), journal, report)

    again = await rerun_changed(routed.swarm(model=ScriptedModel()), journal, report)
    after = await whatif(journal, _billing_rule())
    learned = await suggest_rules(journal, min_precision=0.75, min_support=20)

    assert [(r.rerun_id, r.trail, r.existing) for r in again] == [
        (r.rerun_id, r.trail, True) for r in first
    ]
    assert len(after.sessions) == len(made) and after.changed == report.changed
    assert learned.sessions == len(made)


async def test_the_command_reruns_changed_sessions_with_live(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`whatif --live` names each re-run session and its new route; --json lists them too."""
    made = routed.tickets(40, route=_slipping)
    path = tmp_path / "journal.sqlite"
    with SQLiteJournal(path) as stored:
        await routed.journal_tickets(made, stored)
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(_billing_rule().to_dict()))
    options = ["--swarm", "tests.rules.routed:answering", "--journal", str(path)]
    out = await asyncio.to_thread(_command, capsys, "whatif", *options, "--rules", str(rules))
    assert "Note: steps after a changed decision cannot be known offline" in out

    out = await asyncio.to_thread(
        _command, capsys, "whatif", *options, "--rules", str(rules), "--live"
    )
    data = json.loads(
        await asyncio.to_thread(
            _command, capsys, "whatif", *options, "--rules", str(rules), "--live", "--json"
        )
    )

    slipped = [t.session_id for t in made if t.target != t.context["category"]]
    assert f"Re-ran {len(slipped)} changed sessions live against the swarm's model" in out
    for session_id in slipped:
        assert (
            f"  {session_id} -> {session_id}__whatif_2 (ran now, 1 model call): journal "
            "triage -> sales; now triage -> billing, final_output"
        ) in out
    assert [(r["session_id"], r["existing"], r["trail"]) for r in data["reruns"]] == [
        (session_id, True, ["triage", "billing"]) for session_id in slipped
    ]
    with SQLiteJournal(path, read_only=True) as stored:
        held = {info.session_id for info in await stored.sessions()}
    assert {f"{s}__whatif_2" for s in slipped} <= held


def _command(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["rules", *argv]) == 0
    return capsys.readouterr().out


async def test_a_rerun_journaled_under_other_rules_is_refused_not_read_back() -> None:
    """Rules that send billing to legal cannot take the billing rule's re-run as theirs."""
    made = routed.tickets(20, route=_slipping)
    journal = await routed.journal_tickets(made, InMemoryJournal())
    await rerun_changed(routed.answering(), journal, await whatif(journal, _billing_rule()))
    legal = HandoffGraph()
    legal.add_edge("triage", "legal", "category == 'billing'")

    report = await whatif(journal, legal)
    with pytest.raises(RuleLearningError, match=r"t0000__whatif_2, a re-run under other rules"):
        await rerun_changed(routed.answering(), journal, report)
