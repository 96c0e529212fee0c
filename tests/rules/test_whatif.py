"""What-if replays a journal with proposed rules offline, and agrees with a live run."""

from __future__ import annotations

from typing import Literal

from swarmkit import Edge, HandoffGraph
from swarmkit.journal import InMemoryJournal
from swarmkit.rules import Change, SessionWhatIf, WhatIfReport, whatif, with_rules
from swarmkit.testing import ScriptedModel, text
from tests.rules import corpus


def _rules(*edges: tuple[str, str, str]) -> HandoffGraph:
    rules = HandoffGraph()
    for source, target, when in edges:
        rules.add_edge(source, target, when, priority=-1)
    return rules


async def test_whatif_counts_agreeing_rule_decisions_and_savings() -> None:
    """A rule for billing decides every billing ticket; it agrees except on the noise."""
    journal, plans = await corpus.build(120)
    rules = _rules(("triage", "billing", "category == 'billing'"))
    report = await whatif(journal, rules, graph=corpus.graph())

    by_id = {session.session_id: session for session in report.sessions}
    for item in plans:
        session = by_id[item.session_id]
        if item.context["category"] != "billing" or item.target is None:
            assert session.status == "unchanged"
        elif item.noise:
            assert session.status == "changed"
            assert session.change is not None
            assert (session.change.journaled, session.change.agent) == ("model -> sales", "triage")
            assert session.change.now == "rule -> billing (when category == 'billing')"
        else:
            assert session.status == "same_route"
            assert session.saved_calls == 1 + item.verifies
            assert session.saved_tokens == 107 + 15 * item.verifies


async def test_a_rule_that_fires_where_the_model_answered_is_a_changed_session() -> None:
    """billing answering itself, now sent on by a rule, shows the step where it changes."""
    journal, _ = await corpus.build(30)
    rules = _rules(("billing", "sales", "amount >= 0"))
    report = await whatif(journal, rules, graph=corpus.graph())
    changed = report.changed
    assert changed and all(
        s.change and s.change.journaled == "the model kept the turn" for s in changed
    )


async def test_whatif_agrees_with_a_live_run_on_sessions_it_says_are_unchanged() -> None:
    """Unchanged and same-route sessions, re-run live with the rules, take the same route."""
    journal, plans = await corpus.build(60)
    rules = _rules(("triage", "billing", "category == 'billing'"))
    report = await whatif(journal, rules, graph=corpus.graph())
    live = corpus.swarm(InMemoryJournal(), with_rules(corpus.graph(), rules.edge_list()))
    by_id = {item.session_id: item for item in plans}
    checked = 0
    for session in report.sessions:
        if session.status == "changed":
            continue
        item = by_id[session.session_id]
        journaled = [r for r in await journal.read(item.session_id) if r.kind == "handoff"]
        # Where the rule now routes, the model is asked only for the final answer.
        script = (
            corpus.script(item) if session.status == "unchanged" else ScriptedModel(text("Done."))
        )
        result = await live.with_model(script).run("help", context=item.context)
        assert [h.target for h in result.handoffs] == [r.data["target"] for r in journaled]
        script.assert_exhausted()
        checked += 1
    assert checked == report.count("unchanged") + report.count("same_route") > 0


def _session(
    session_id: str,
    status: Literal["unchanged", "same_route", "changed"],
    decided: int,
    agreed: int,
) -> SessionWhatIf:
    change = None
    if status == "changed":
        change = Change(seq=9, agent="triage", turn=2, journaled="model -> sales", now="rule")
    return SessionWhatIf(
        session_id=session_id,
        status=status,
        rule_decided=decided,
        agreed=agreed,
        saved_calls=agreed,
        saved_tokens=15 * agreed,
        change=change,
    )


def test_the_summary_counts_the_agreeing_turns_of_same_route_sessions_only() -> None:
    """A changed session's disagreeing turn, and its agreeing ones, are not same-route turns."""
    report = WhatIfReport(
        sessions=(
            _session("a", "unchanged", 0, 0),
            _session("b", "same_route", 2, 2),
            _session("c", "same_route", 1, 1),
            _session("d", "changed", 2, 1),
            _session("e", "changed", 1, 0),
        ),
        rules=(Edge(source="triage", target="billing", when="category == 'billing'"),),
    )
    assert report.agreed == 3
    assert (report.saved_calls, report.saved_tokens) == (4, 60)  # d saved one before its change


async def test_a_changed_session_counts_its_changed_turn_as_rule_decided_not_agreed() -> None:
    """The noise tickets: a rule decides their one model-decided turn, and disagrees."""
    journal, plans = await corpus.build(120)
    rules = _rules(("triage", "billing", "category == 'billing'"))
    report = await whatif(journal, rules, graph=corpus.graph())
    noise = {p.session_id for p in plans if p.noise and p.target is not None}
    agreeing = [p for p in plans if p.context["category"] == p.target == "billing"]
    assert noise and {s.session_id for s in report.changed} == noise
    assert all((s.rule_decided, s.agreed) == (1, 0) for s in report.changed)
    assert report.agreed == report.count("same_route") == len(agreeing)
