"""Shadow rules cost nothing where no journal keeps their verdicts."""

from __future__ import annotations

import gc

from swarmkit._run import _shadow
from swarmkit.journal import InMemoryJournal
from swarmkit.shadow import verdicts_held
from tests.rules.shadow_swarm import script, shadow_rules, swarm


async def test_a_run_with_no_journal_judges_no_shadow_rule() -> None:
    """Unjournaled, the run answers as without shadow rules and never prepares or evaluates
    them; journaled, the same run judges them and keeps the verdicts."""
    rules = shadow_rules()
    shadowed = swarm(shadow=rules)
    context = {"category": "billing", "amount": 80}
    result = await shadowed.with_model(script("billing")).run("help", context=context)
    assert result.trail == ("triage", "billing")
    assert shadowed.spec.shadow not in _shadow._PREPARED

    journal = InMemoryJournal()
    kept = await shadowed.with_model(script("billing")).run(
        "help", context=context, journal=journal, session_id="kept"
    )
    assert kept.trail == result.trail
    assert [verdicts_held(r) is not None for r in await journal.read("kept")].count(True) == 1
    assert shadowed.spec.shadow in _shadow._PREPARED


async def test_the_rules_prepared_for_a_graph_and_journal_go_with_them() -> None:
    """What a process keeps per shadow graph (its prepared rules) and per journal (the rule
    lists its rules log names) is let go with the graph and the journal, so a new graph or
    journal that takes the same memory starts afresh."""
    gc.collect()
    prepared, named = len(_shadow._PREPARED._found), len(_shadow._NAMED._found)
    journal, rules = InMemoryJournal(), shadow_rules()
    await swarm(journal, rules).with_model(script("billing")).run("help", session_id="s")
    assert rules in _shadow._PREPARED and journal in _shadow._NAMED
    assert len(_shadow._NAMED._found) == named + 1
    del journal, rules
    gc.collect()
    assert (len(_shadow._PREPARED._found), len(_shadow._NAMED._found)) == (prepared, named)
