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


async def test_rules_off_stops_where_a_rule_decided() -> None:
    """With the rules off, the step a rule decided is one the model would now take: it stops
    there offline, with zero model calls."""
    journal = InMemoryJournal()
    await _outage(journal)
    offline = build_support_swarm(NeverCalledModel())

    with pytest.raises(ReplayDivergenceError) as raised:
        await offline.what_if("o1", journal, rules=False)

    rule = next(r.seq for r in await journal.read("o1") if r.kind == "rule")
    assert raised.value.step == rule


async def test_live_forks_a_labelled_session_where_the_change_first_matters() -> None:
    """live=True: the steps before the first changed one come from the journal, then the run
    goes on against the model as a new session beside the original, which stays as it was."""
    journal = InMemoryJournal()
    await _outage(journal)
    before = await journal.read("o1")
    live = build_support_swarm(DemoModel())

    result = await live.what_if("o1", journal, context={"category": "billing"}, live=True)

    assert result.session_id == "o1__whatif_2"
    assert result.trail == ("triage", "billing")
    assert result.stop_reason == "final_output"
    fork = await journal.read("o1__whatif_2")
    assert fork[0].data["context"] == {"category": "billing"}
    assert [r.kind for r in fork[:2]] == [r.kind for r in before[:2]]
    assert await journal.read("o1") == before
