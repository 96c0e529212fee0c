"""What-if replay: a session replayed as if asked something else stops where that first matters."""

from __future__ import annotations

import pytest

from swarmkit.demo import DemoModel, build_support_swarm
from swarmkit.exceptions import ReplayDivergenceError
from swarmkit.journal import InMemoryJournal
from swarmkit.testing import NeverCalledModel

OUTAGE = "Our dashboard shows 502 errors since 9:15. Is something down?"


async def _outage(journal: InMemoryJournal) -> None:
    """Session "o1": an outage ticket a rule routes from triage to tech_support."""
    swarm = build_support_swarm(DemoModel())
    await swarm.run(OUTAGE, context={"category": "outage"}, session_id="o1", journal=journal)


async def test_a_changed_context_stops_at_the_rule_it_changes() -> None:
    """Another category fires another rule: the diff names the rule, with zero model calls."""
    journal = InMemoryJournal()
    await _outage(journal)
    offline = build_support_swarm(NeverCalledModel())

    with pytest.raises(ReplayDivergenceError) as raised:
        await offline.what_if("o1", journal, context={"category": "billing"})

    assert raised.value.step == 2
    assert '+  "target": "billing"' in raised.value.diff


async def test_a_changed_prompt_is_served_from_the_journal_until_a_request_differs() -> None:
    """The rule-routed start replays as journaled; the first model request that differs stops."""
    journal = InMemoryJournal()
    await _outage(journal)
    offline = build_support_swarm(NeverCalledModel())

    with pytest.raises(ReplayDivergenceError) as raised:
        await offline.what_if("o1", journal, prompt="Is the API down?")

    first_call = next(r.seq for r in await journal.read("o1") if r.kind == "model_call")
    assert raised.value.step == first_call > 0
    assert "Is the API down?" in raised.value.diff


async def test_a_change_that_alters_no_request_reproduces_the_session() -> None:
    """A context key nothing reads leaves every request as it was: the session ends the same."""
    journal = InMemoryJournal()
    await _outage(journal)
    offline = build_support_swarm(NeverCalledModel())

    result = await offline.what_if("o1", journal, context={"category": "outage", "note": "x"})

    assert result.trail == ("triage", "tech_support")
