"""Shadow rules cost nothing where no journal keeps their verdicts."""

from __future__ import annotations

from swarmkit._run import _shadow
from swarmkit.journal import InMemoryJournal
from swarmkit.shadow import SHADOW_RECORD
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
    assert [r.kind for r in await journal.read("kept")].count(SHADOW_RECORD) == 1
    assert shadowed.spec.shadow in _shadow._PREPARED
