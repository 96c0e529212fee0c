"""Suggestions recover the rule a scripted model follows, with exact held-out figures."""

from __future__ import annotations

from swarmkit import HandoffGraph
from swarmkit.rules import KEPT, held_out, suggest_rules
from tests.rules import corpus


async def test_suggestion_recovers_the_known_rule_with_exact_figures() -> None:
    """billing tickets go to billing: found, with held-out precision and support counted exactly."""
    journal, plans = await corpus.build(300)
    report = await suggest_rules(journal, graph=corpus.graph(), min_precision=0.9, min_support=10)

    billing = next(s for s in report.suggestions if s.target == "billing")
    assert billing.when == "category == 'billing'"
    ruled = [p for p in plans if p.context["category"] == "billing" and p.target is not None]
    held = [p for p in ruled if held_out(p.session_id)]
    assert billing.support == len(held)
    assert billing.agreed == sum(p.target == "billing" for p in held)
    assert billing.precision == billing.agreed / billing.support
    assert billing.counter_count == sum(p.noise for p in ruled)
    assert {c.session_id for c in billing.counter_examples} <= {
        p.session_id for p in ruled if p.noise
    }
    assert all(c.chosen == "sales" for c in billing.counter_examples)


async def test_rule_holds_exactly_where_the_model_routed_the_same_on_held_out_sessions() -> None:
    """On every held-out session where the rule holds and no noise was scripted, it agrees."""
    journal, plans = await corpus.build(300)
    report = await suggest_rules(journal, graph=corpus.graph(), min_precision=0.9, min_support=10)
    rules = report.graph()
    for item in plans:
        if not held_out(item.session_id) or item.target is None or item.coin or item.noise:
            continue
        state = {**item.context, "verified": item.verifies or None}
        routed = rules.route("triage", state)
        assert routed in (None, item.target)
        if item.context["category"] == "billing":
            assert routed == "billing"


async def test_savings_count_matches_the_model_calls_in_the_journal() -> None:
    """Saved calls and tokens equal the journal's triage model calls where the rule agrees."""
    journal, plans = await corpus.build(300)
    report = await suggest_rules(journal, graph=corpus.graph(), min_precision=0.9, min_support=10)
    billing = next(s for s in report.suggestions if s.target == "billing")
    calls = tokens = 0
    for item in plans:
        if item.context["category"] != "billing" or item.target != "billing":
            continue
        for record in await journal.read(item.session_id):
            if record.kind == "model_call" and record.data["agent"] == "triage":
                calls += 1
                tokens += record.data["response"]["usage"]["total_tokens"]
    assert (billing.saved_calls, billing.saved_tokens) == (calls, tokens)
    agreeing = [p for p in plans if p.context["category"] == p.target == "billing"]
    assert calls == len(agreeing) + sum(p.verifies for p in agreeing)  # verify costs a call


async def test_coin_flips_are_reported_as_inconsistent_routing() -> None:
    """The 'other' tickets the script splits by coin show up with the coin's counts."""
    journal, plans = await corpus.build(300)
    report = await suggest_rules(journal, graph=corpus.graph(), min_precision=0.9, min_support=10)
    found = [i for i in report.inconsistencies if "category == 'other'" in i.context]
    counts: dict[str, int] = {}
    for inconsistency in found:
        for target, count in inconsistency.counts.items():
            counts[target] = counts.get(target, 0) + count
    flips = [p.target for p in plans if p.coin and p.target is not None]
    assert counts == {"billing": flips.count("billing"), "sales": flips.count("sales")}
    assert KEPT not in counts
    assert all("other" not in s.when for s in report.suggestions)


async def test_secret_keys_are_never_used_and_suggestions_load_as_a_graph() -> None:
    """A redacted key stays out of every condition; the export loads with from_dict."""
    journal, _ = await corpus.build(300)
    report = await suggest_rules(journal, graph=corpus.graph(), min_precision=0.9, min_support=10)
    assert "api_key" in report.left_out
    assert all("api_key" not in s.when for s in report.suggestions)
    loaded = HandoffGraph.from_dict(report.to_dict())
    assert [(e.target, e.when, e.priority) for e in loaded.edge_list("triage")] == [
        (s.target, s.when, s.priority) for s in report.suggestions
    ]
    assert all(s.priority < 0 for s in report.suggestions)  # after the existing vip rule


async def test_below_threshold_rules_are_never_suggested() -> None:
    """At a precision the noise cannot meet, the billing rule is reported below threshold only."""
    journal, _ = await corpus.build(300)
    report = await suggest_rules(journal, graph=corpus.graph(), min_precision=1.0, min_support=10)
    assert all(s.precision == 1.0 and s.support >= 10 for s in report.suggestions)
    assert all(s.when != "category == 'billing'" for s in report.suggestions)


async def test_a_rule_contradicting_an_existing_rule_is_reported_as_a_conflict() -> None:
    """A current graph whose rule decided some turns the suggestion covers is named, not hidden."""
    journal, _ = await corpus.build(300)
    current = corpus.graph()
    current.add_edge("triage", "support", when="amount == 999")
    report = await suggest_rules(journal, graph=current, min_precision=0.9, min_support=10)
    billing = next(s for s in report.suggestions if s.target == "billing")
    assert any("existing rule sent to 'support'" in c for c in billing.conflicts)
