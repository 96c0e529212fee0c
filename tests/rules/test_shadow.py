"""Shadow rules are judged on every model-decided turn and journaled, and change nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from swarmkit import HandoffGraph
from swarmkit.conditions import compile_condition
from swarmkit.exceptions import ConfigurationError, ReplayDivergenceError
from swarmkit.journal import InMemoryJournal, Journal
from swarmkit.rules import promote, status
from swarmkit.shadow import (
    RULE_SET,
    SHADOW_RECORD,
    read_rules_log,
    read_verdicts,
    rule_set_digest,
    verdicts_held,
)
from tests.rules.shadow_swarm import BILLING, OVER_50, script, shadow_rules, swarm


async def _shadow_records(journal: Journal, session_id: str) -> list[dict[str, Any]]:
    return [dict(found) for r in await journal.read(session_id) if (found := verdicts_held(r))]


async def test_a_shadow_run_matches_a_run_without_shadow_rules() -> None:
    """Same answer, trail and requests with and without shadow rules; no extra call."""
    context = {"category": "billing", "amount": 80}
    plain_model, shadow_model = script("billing"), script("billing")
    plain = await swarm().with_model(plain_model).run("help", context=context)
    shadowed = (
        await swarm(shadow=shadow_rules()).with_model(shadow_model).run("help", context=context)
    )
    assert (shadowed.final_output, shadowed.trail) == (plain.final_output, plain.trail)
    assert shadowed.handoffs == plain.handoffs
    assert shadow_model.requests == plain_model.requests
    assert len(shadow_model.requests) == 2


async def test_each_model_decision_journals_every_shadow_rules_verdict(store: Journal) -> None:
    """A billing ticket over 50: the billing rule agrees, the sales rule fires and disagrees;
    the billing agent's own turn has no shadow rules, so it journals none. The verdicts name
    the rule list by digest; the rules log names its rules once."""
    shadowed = swarm(store, shadow_rules())
    await shadowed.with_model(script("billing")).run(
        "help", context={"category": "billing", "amount": 80}, session_id="s1"
    )
    assert await _shadow_records(store, "s1") == [
        {
            "agent": "triage",
            "turn": 1,
            "model_target": "billing",
            "tokens": 107,
            "set": rule_set_digest("triage", [BILLING, OVER_50]),
            "fired": [0, 1],
            "agrees": [0],
        }
    ]
    [named] = [r.data for r in await read_rules_log(store, rule_lists=True) if r.kind == RULE_SET]
    assert named["rules"] == [BILLING, OVER_50]


async def test_a_rule_that_does_not_fire_neither_agrees_nor_disagrees() -> None:
    """The model keeps the turn; neither rule's condition holds."""
    journal = InMemoryJournal()
    await (
        swarm(journal, shadow_rules())
        .with_model(script(None))
        .run("help", context={"category": "other", "amount": 3}, session_id="s1")
    )
    [record] = await _shadow_records(journal, "s1")
    assert record["model_target"] is None
    [verdicts] = await read_verdicts(journal, "s1")
    assert [(v.fired, v.agrees) for v in verdicts] == [(False, False)] * 2


async def test_replay_reproduces_the_verdicts_and_a_strict_replay_checks_them() -> None:
    """Replay makes no call and reads the same verdicts; changed shadow rules diverge."""
    journal = InMemoryJournal()
    context = {"category": "billing", "amount": 80}
    live = (
        await swarm(journal, shadow_rules())
        .with_model(script("billing"))
        .run("help", context=context, session_id="s1")
    )
    replayed = await swarm(journal, shadow_rules()).replay("s1")
    assert (replayed.final_output, replayed.trail) == (live.final_output, live.trail)
    other = HandoffGraph()
    other.add_edge("triage", "sales", "amount > 10")
    with pytest.raises(ReplayDivergenceError, match="shadow rules' verdicts"):
        await swarm(journal, other).replay("s1")


async def test_shadow_rules_read_from_a_rules_file_dict() -> None:
    """A rules file's data (the graph's to_dict) is taken as it is."""
    journal = InMemoryJournal()
    await (
        swarm(journal, shadow_rules().to_dict())
        .with_model(script("billing"))
        .run("help", context={"category": "billing", "amount": 1}, session_id="s1")
    )
    [verdicts] = await read_verdicts(journal, "s1")
    assert [v.rule for v in verdicts] == [BILLING, OVER_50]


def test_a_shadow_rule_naming_an_unknown_agent_is_a_configuration_error() -> None:
    """The swarm refuses it at construction, naming the agent."""
    rules = HandoffGraph()
    rules.add_edge("triage", "refunds", "category == 'refund'")
    with pytest.raises(ConfigurationError, match="refunds"):
        swarm(shadow=rules)
    with pytest.raises(ConfigurationError, match="HandoffGraph"):
        swarm(shadow=["triage -> billing"])  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="format"):
        swarm(shadow={"edges": []})


async def test_status_and_promotion_read_and_write_either_store(
    store: Journal, tmp_path: Path
) -> None:
    """The same counts, and the promotion record, on SQLite and on Postgres."""
    shadowed = swarm(store, shadow_rules())
    for index in range(12):
        target = "billing" if index else "sales"
        await shadowed.with_model(script(target)).run(
            "help", context={"category": "billing", "amount": index}, session_id=f"s{index:02d}"
        )
    report = await status(store, shadowed)
    billing = report.rule(BILLING)
    assert (billing.evidence.fired, billing.evidence.agreements) == (12, 11)
    assert [d.session_id for d in billing.disagreements] == ["s00"]
    await promote(
        store, shadowed, BILLING, out=tmp_path / "rules.json", threshold=0.6, min_fired=10, by="ana"
    )
    [record] = await read_rules_log(store)
    assert record.data["evidence"]["fired"] == 12 and record.data["by"] == "ana"


class _Text(str):
    """A string of a subclass, as a caller's context may hold."""


async def test_rules_sharing_a_first_test_are_judged_as_each_alone() -> None:
    """Rules grouped by their first test (evaluated once for the group, picked by the value
    of the key they test against a string, or by a number's place among the numbers they
    compare one key with) fire exactly where their own conditions hold, on odd values too
    (floats, huge ints, booleans, numbers as text, missing paths, quotes, lists, a string
    subclass)."""
    rules = HandoffGraph()
    conditions = [
        "category == 'billing' and amount >= 10",
        "category == 'billing' and amount < 10",
        "category == 'it\\'s' and amount == 1",
        "category == 'it\\'s' or amount == 2",
        "category == 'it\\'s' and tier == 1",
        "tier == 1 and vip",
        "tier == 1 and not vip",
        "vip == true and amount in [1, 2.0]",
        "vip == true and tier != null",
        "amount > 3",
        "category == 'billing' and amount >= 2 and tier == 1",
        "category == 'billing' and 'gold' in tags",
        "category == 'sales' and amount < 5",
        "amount >= 2",
        "amount >= 12.0",
        "2 <= amount",
        "amount < 2",
        "amount < 12",
        "amount > 1.5",
        "amount > 2",
        "amount <= 2",
        "amount <= 9007199254740993",
        "category == 'billing' and amount >= 2",
        "category == 'billing' and amount >= 12",
        "category == 'billing' and amount < 2.0",
        "category == 'billing' and amount < 12",
        "category == 'billing' and tier > 1",
        "category == 'billing' and tier > 0",
    ]
    for index, when in enumerate(conditions):
        rules.add_edge("triage", ("billing", "sales")[index % 2], when)
    contexts = [
        {
            "category": category,
            "amount": amount,
            "tier": tier,
            "vip": vip,
            "tags": ["gold"] * (tier == 1),
        }
        for category in ("billing", "it's", None, ["billing"], _Text("billing"), "sales")
        for amount, tier, vip in (
            (1, 1.0, True),
            (2.0, 1, False),
            (12, None, 1),
            (None, 2, None),
            (1.5, True, None),
            (True, "2", None),
            (2**60, -0.0, None),
            ("5", -(2**60), None),
        )
    ]
    journal = InMemoryJournal()
    shadowed = swarm(journal, rules)
    for index, context in enumerate(contexts):
        await shadowed.with_model(script(None)).run("help", context=context, session_id=f"c{index}")
        [verdicts] = await read_verdicts(journal, f"c{index}")
        expected = [compile_condition(when)(context) for when in conditions]
        assert [v.fired for v in verdicts] == expected, context


async def test_rules_of_one_key_with_bounds_out_of_order_journal_their_indices_in_order() -> None:
    """One switch whose case's numbers fall in the reverse order of the rules: the verdicts
    name the rules that fired in the rules' order."""
    rules = HandoffGraph()
    for bound in (30, 20, 10):
        rules.add_edge("triage", "billing", f"category == 'billing' and amount >= {bound}")
    rules.add_edge("triage", "sales", "category == 'sales' and amount >= 1")
    journal = InMemoryJournal()
    await (
        swarm(journal, rules)
        .with_model(script(None))
        .run("help", context={"category": "billing", "amount": 25}, session_id="s1")
    )
    [record] = await _shadow_records(journal, "s1")
    assert record["fired"] == [1, 2]


async def test_the_verdicts_lead_the_model_calls_record_and_leave_its_digest_alone() -> None:
    """The verdicts are the first member of the decision's model_call record, in no record
    of their own; the request digests are those of a run without shadow rules, so the
    session replays strictly without the shadow rules too."""
    context = {"category": "billing", "amount": 80}
    shadowed, plain = InMemoryJournal(), InMemoryJournal()
    await (
        swarm(shadowed, shadow_rules())
        .with_model(script("billing"))
        .run("help", context=context, session_id="s1")
    )
    await swarm(plain).with_model(script("billing")).run("help", context=context, session_id="s1")
    records = await shadowed.read("s1")
    assert SHADOW_RECORD not in [r.kind for r in records]
    calls = [r.data for r in records if r.kind == "model_call"]
    assert [next(iter(call)) for call in calls] == ["shadow", "agent"]
    plain_calls = [r.data for r in await plain.read("s1") if r.kind == "model_call"]
    assert [c["digest"] for c in calls] == [c["digest"] for c in plain_calls]
    replayed = await swarm(shadowed).replay("s1")
    assert replayed.trail == ("triage", "billing")
