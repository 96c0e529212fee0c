"""Promotion: a shadow rule becomes active only on enough agreement, and is journaled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarmkit import HandoffGraph
from swarmkit.exceptions import PromotionRefusedError, RuleLearningError
from swarmkit.journal import InMemoryJournal, Journal
from swarmkit.rules import promote, wilson
from swarmkit.shadow import read_rules_log
from swarmkit.testing import FixedRuntime
from tests.rules.shadow_swarm import script, shadow_rules, swarm

BILLING = "triage -> billing if category == 'billing'"


async def corpus(journal: Journal, agree: int, disagree: int = 0) -> None:
    """``agree`` billing tickets the model sends to billing, ``disagree`` it sends to sales."""
    shadowed = swarm(journal, shadow_rules())
    for index in range(agree + disagree):
        target = "billing" if index < agree else "sales"
        await shadowed.with_model(script(target)).run(
            "help", context={"category": "billing", "amount": 1}, session_id=f"p{index:03d}"
        )


async def test_a_rule_at_the_threshold_is_promoted_with_its_record(tmp_path: Path) -> None:
    """30 agreements in 30: lower bound 0.8865 >= 0.88; the file and the record are written."""
    journal = InMemoryJournal()
    await corpus(journal, 30)
    out = tmp_path / "rules.json"
    promoted = await promote(
        journal,
        swarm(shadow=shadow_rules()),
        BILLING,
        out=out,
        threshold=0.88,
        by="ana",
        runtime=FixedRuntime(start=1_700_000_000.0).runtime(),
    )
    graph = HandoffGraph.from_dict(json.loads(out.read_text()))
    assert graph.edges("triage") == [("billing", "category == 'billing'")]
    [record] = await read_rules_log(journal)
    assert record.kind == "rule_promoted" and record.at == 1_700_000_000.0
    assert record.data["by"] == "ana" and record.data["rule"] == BILLING
    assert record.data["evidence"]["fired"] == 30
    assert record.data["evidence"]["lower"] == pytest.approx(wilson(30, 30)[0])
    assert promoted.record == record


@pytest.mark.parametrize(
    ("agree", "disagree", "threshold", "min_fired", "why"),
    [
        (29, 0, 0.5, 30, "fired 29 times, fewer than the 30"),
        (30, 0, 0.89, 30, "below the threshold 0.89"),
        (28, 2, 0.8, 30, "below the threshold 0.8"),
    ],
)
async def test_a_rule_short_of_the_evidence_is_refused_and_nothing_is_written(
    tmp_path: Path, agree: int, disagree: int, threshold: float, min_fired: int, why: str
) -> None:
    """Too few fired decisions or a low bound: the error shows the evidence; no file, no record."""
    journal = InMemoryJournal()
    await corpus(journal, agree, disagree)
    out = tmp_path / "rules.json"
    with pytest.raises(PromotionRefusedError, match=why) as refused:
        await promote(
            journal,
            swarm(shadow=shadow_rules()),
            BILLING,
            out=out,
            threshold=threshold,
            min_fired=min_fired,
        )
    assert (refused.value.fired, refused.value.agreements) == (agree + disagree, agree)
    assert not out.exists() and list(tmp_path.iterdir()) == []
    assert await read_rules_log(journal) == ()


async def test_a_promotion_adds_to_an_existing_rules_file(tmp_path: Path) -> None:
    """The rules already in the file stay; the promoted rule joins them."""
    journal = InMemoryJournal()
    await corpus(journal, 40)
    out = tmp_path / "rules.json"
    existing = HandoffGraph()
    existing.add_edge("triage", "sales", "category == 'sales'")
    out.write_text(json.dumps(existing.to_dict()))
    await promote(journal, swarm(shadow=shadow_rules()), BILLING, out=out, threshold=0.9)
    graph = HandoffGraph.from_dict(json.loads(out.read_text()))
    assert [target for target, _ in graph.edges("triage")] == ["sales", "billing"]


async def test_a_rule_closing_a_cycle_in_the_rules_file_is_refused(tmp_path: Path) -> None:
    """A rules file routing billing back to triage: the promotion says so; nothing is written."""
    journal = InMemoryJournal()
    await corpus(journal, 30)
    out = tmp_path / "rules.json"
    existing = HandoffGraph()
    existing.add_edge("billing", "triage", "category == 'billing'")
    out.write_text(json.dumps(existing.to_dict()))
    with pytest.raises(RuleLearningError, match="would close a cycle"):
        await promote(journal, swarm(shadow=shadow_rules()), BILLING, out=out, threshold=0.88)
    assert HandoffGraph.from_dict(json.loads(out.read_text())).edges("triage") == []
    assert await read_rules_log(journal) == ()


async def test_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    """An unknown rule, a broken rules file, a threshold out of range: each named."""
    journal = InMemoryJournal()
    await corpus(journal, 30)
    shadowed = swarm(shadow=shadow_rules())
    with pytest.raises(RuleLearningError, match="not a shadow rule"):
        await promote(journal, shadowed, "triage -> nowhere", out=tmp_path / "r.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(RuleLearningError, match="not JSON"):
        await promote(journal, shadowed, BILLING, out=broken)
    with pytest.raises(RuleLearningError, match="threshold"):
        await promote(journal, shadowed, BILLING, out=tmp_path / "r.json", threshold=1.5)
    assert await read_rules_log(journal) == ()


@pytest.mark.parametrize(("agree", "promoted"), [(72, False), (73, True)])
async def test_the_defaults_edge_a_rule_that_always_agrees_needs_73_decisions(
    tmp_path: Path, agree: int, promoted: bool
) -> None:
    """At the defaults (0.95, 30) all-agreeing evidence passes from 73 decisions (0.950006);
    72 give 0.949349."""
    journal = InMemoryJournal()
    await corpus(journal, agree)
    out = tmp_path / "rules.json"
    shadowed = swarm(shadow=shadow_rules())
    if promoted:
        await promote(journal, shadowed, BILLING, out=out)
    else:
        with pytest.raises(PromotionRefusedError, match=r"0\.9493"):
            await promote(journal, shadowed, BILLING, out=out)
    assert out.exists() is promoted
    assert len(await read_rules_log(journal)) == promoted
