"""Handoff and next-turn rules that read the user's latest message and its words."""

from __future__ import annotations

from swarmkit import Agent, HandoffGraph, NextTurn, Swarm
from swarmkit.journal import InMemoryJournal
from swarmkit.testing import NeverCalledModel, ScriptedModel, text, transfer


def desk(model: object, graph: HandoffGraph, journal: InMemoryJournal | None = None) -> Swarm:
    """Triage hands off to billing or sales; the graph's rules may decide first."""
    agents = [
        Agent(name="triage", handoffs=["billing", "sales"]),
        Agent(name="billing", handoffs=["triage"]),
        Agent(name="sales", handoffs=["triage"]),
    ]
    return Swarm(agents, "triage", model=model, graph=graph, journal=journal)  # type: ignore[arg-type]


def word_rules() -> HandoffGraph:
    """Refunds and invoices go to billing; a gold customer who asks no refund goes to sales."""
    graph = HandoffGraph()
    graph.add_edge(
        "triage", "billing", when="'refund' in swarm.user_words or 'invoice' in swarm.user_words"
    )
    graph.add_edge(
        "triage", "sales", when="tier == 'gold' and 'refund' not in swarm.user_words", priority=-1
    )
    return graph


async def test_a_word_rule_routes_without_a_model_call_whatever_the_case() -> None:
    """'refund' in swarm.user_words fires on "REFUND", so triage's model is never asked."""
    model = ScriptedModel(text("Refunded."))
    result = await desk(model, word_rules()).run("I want a REFUND, now!")

    assert result.trail == ("triage", "billing")
    assert result.handoffs[0].decided_by == "rule"
    assert result.turns == 1
    model.assert_exhausted()


async def test_a_word_test_combines_with_a_context_test() -> None:
    """A gold customer asking about prices goes to sales; a free one is left to the model."""
    gold = ScriptedModel(text("Here is a quote."))
    routed = await desk(gold, word_rules()).run("What is the price?", context={"tier": "gold"})
    free = ScriptedModel(transfer("sales"), text("Here is a quote."))
    asked = await desk(free, word_rules()).run("What is the price?", context={"tier": "free"})

    assert routed.trail == ("triage", "sales") and routed.handoffs[0].decided_by == "rule"
    assert asked.trail == ("triage", "sales") and asked.handoffs[0].decided_by == "llm"
    gold.assert_exhausted()
    free.assert_exhausted()


async def test_the_raw_message_is_there_too() -> None:
    """swarm.user_message is the text as the user wrote it (a substring test is case-sensitive)."""
    graph = HandoffGraph()
    graph.add_edge("triage", "billing", when="'INV-' in swarm.user_message")
    model = ScriptedModel(text("Found it."))
    result = await desk(model, graph).run("Where is INV-7?")

    assert result.trail == ("triage", "billing")
    model.assert_exhausted()


async def test_replay_reproduces_a_decision_made_on_the_message() -> None:
    """A journaled session whose rule read the words replays with zero model calls."""
    journal = InMemoryJournal()
    first = await desk(ScriptedModel(text("Refunded.")), word_rules(), journal).run(
        "refund please", session_id="s"
    )
    replayed = await desk(NeverCalledModel(), word_rules(), journal).replay("s")

    assert replayed.trail == first.trail == ("triage", "billing")
    assert replayed.rule_decisions == first.rule_decisions


async def test_a_redacted_message_gives_the_rules_no_text() -> None:
    """A message holding a redacted value: the word rule does not fire, the model decides."""
    model = ScriptedModel(transfer("sales"), text("ok"))
    result = await desk(model, word_rules()).run('refund {"api_key": "[redacted]"}')

    assert result.trail == ("triage", "sales")
    assert result.handoffs[0].decided_by == "llm"


def test_check_knows_the_message_facts() -> None:
    """swarm.check() reports nothing about swarm.user_words or swarm.user_message."""
    graph = word_rules()
    graph.add_edge("triage", "billing", when="'INV-' in swarm.user_message", priority=-2)
    findings = desk(NeverCalledModel(), graph).check()

    assert not [f for f in findings if "user_" in f.message], findings


def test_check_still_reports_a_misspelt_message_fact() -> None:
    """swarm.user_word (no s) is an unknown swarm fact, with the right name suggested."""
    graph = HandoffGraph()
    graph.add_edge("triage", "billing", when="'refund' in swarm.user_word")
    found = [f for f in desk(NeverCalledModel(), graph).check() if f.code == "unknown_swarm_key"]

    assert len(found) == 1 and "user_words" in found[0].fix


async def test_next_turn_rules_see_the_same_words() -> None:
    """A next-turn rule on swarm.user_words sends a new refund question back to billing."""
    rules = NextTurn(rules=[("'refund' in swarm.user_words", "billing")], otherwise="entry")
    model = ScriptedModel(text("Hello."), text("Refunded."))
    swarm = Swarm(
        [Agent(name="triage", handoffs=["billing"]), Agent(name="billing")],
        "triage",
        model=model,
        next_turn=rules,
        journal=InMemoryJournal(),
    )
    first = await swarm.run("Hi", session_id="c", continue_session=True)
    second = await swarm.run("Refund, please.", session_id="c", continue_session=True)

    assert (first.trail, second.trail) == (("triage",), ("billing",))
    assert second.next_turn is not None and second.next_turn.policy == "rule"
