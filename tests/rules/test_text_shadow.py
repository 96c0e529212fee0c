"""A rule that reads the message goes through shadow, status and promotion like any other."""

from __future__ import annotations

import json
from pathlib import Path

from swarmkit import HandoffGraph
from swarmkit.journal import InMemoryJournal
from swarmkit.rules import promote, status
from swarmkit.shadow import PROMOTED, read_rules_log, read_verdicts
from swarmkit.testing import NeverCalledModel, ScriptedModel, text
from tests.rules.shadow_swarm import script, swarm

REFUND = "triage -> billing if 'refund' in swarm.user_words"


def _word_rules() -> HandoffGraph:
    rules = HandoffGraph()
    rules.add_edge("triage", "billing", "'refund' in swarm.user_words")
    return rules


MESSAGES = [
    ("I want a REFUND now", "billing"),
    ("refund, please!", "billing"),
    ("Where is my order?", "sales"),
    ("Refund: the box was empty", "billing"),
    ("how much is the gold plan", "sales"),
]
"""Each message and where the model sends it: refunds to billing, the rest to sales."""


async def test_a_word_rule_in_shadow_is_judged_counted_and_promoted(tmp_path: Path) -> None:
    """Judged on each message whatever its case, counted by status, promoted on the evidence;
    the promoted file then routes a refund without a model call."""
    journal = InMemoryJournal()
    shadowed = swarm(journal, _word_rules())
    for round_ in range(4):
        for number, (message, target) in enumerate(MESSAGES):
            await shadowed.with_model(script(target)).run(
                message, context={}, session_id=f"w{round_}-{number}"
            )
    [verdicts] = await read_verdicts(journal, "w0-0")
    assert [(v.rule, v.fired, v.agrees) for v in verdicts] == [(REFUND, True, True)]
    [verdicts] = await read_verdicts(journal, "w0-2")
    assert [(v.fired, v.agrees) for v in verdicts] == [(False, False)]

    rule = (await status(journal, shadowed)).rule(REFUND)
    assert (rule.mode, rule.decisions, rule.evidence.fired, rule.evidence.agreements) == (
        "shadow",
        20,
        12,
        12,
    )
    assert rule.disagreements == ()

    out = tmp_path / "rules.json"
    await promote(journal, shadowed, REFUND, out=out, threshold=0.75, min_fired=12, by="ana")
    [record] = await read_rules_log(journal)
    assert (record.kind, record.data["rule"], record.data["by"]) == (PROMOTED, REFUND, "ana")

    active = HandoffGraph.from_dict(json.loads(out.read_text()))
    routed = swarm(InMemoryJournal()).with_graph(active)
    result = await routed.with_model(ScriptedModel(text("Billing here."))).run("REFUND me")
    assert result.trail == ("triage", "billing")
    assert result.handoffs[0].decided_by == "rule"
    replayed = await routed.with_model(NeverCalledModel()).replay(result.session_id)
    assert replayed.trail == result.trail
