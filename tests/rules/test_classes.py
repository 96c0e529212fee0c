"""Deterministic routing by category: every class gets its rule, exact on held-out sessions."""

from __future__ import annotations

import pytest

from swarmkit.rules import suggest_rules
from tests.rules import routed


@pytest.mark.parametrize("classes", [2, 3, 5])
async def test_every_class_of_a_deterministic_split_gets_its_rule(classes: int) -> None:
    """Two, three or five categories each sent to their own agent: one rule per category."""
    names = routed.CLASSES[:classes]
    made = routed.tickets(100 * classes, names)
    journal = await routed.journal_tickets(made)
    report = await suggest_rules(journal, min_precision=0.98, min_support=20)

    found = {s.target: s for s in report.suggestions}
    assert {name: s.when for name, s in found.items()} == {
        name: f"category == '{name}'" for name in names
    }
    for name, suggestion in found.items():
        held = [t for t in made if t.held and t.target == name]
        assert (suggestion.precision, suggestion.support, suggestion.agreed) == (
            1.0,
            len(held),
            len(held),
        )
        assert suggestion.counter_count == 0
    assert (report.withheld, report.inconsistencies) == ((), ())


async def test_the_two_way_split_routes_every_held_out_ticket_where_the_model_did() -> None:
    """200 tickets, billing and sales: the suggested graph routes every held-out one alike."""
    made = routed.tickets(200)
    journal = await routed.journal_tickets(made)
    report = await suggest_rules(journal, min_precision=0.98, min_support=20)
    rules = report.graph()
    held = [t for t in made if t.held]
    assert held and all(rules.route("triage", t.context) == t.target for t in held)
    assert sum(s.saved_calls for s in report.suggestions) == len(made)
