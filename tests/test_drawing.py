"""Drawings of swarms and of journaled sessions, in Mermaid, DOT and plain text."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from swarmkit import Agent, ConfigurationError, Handoff, HandoffGraph, JournalError, Swarm
from swarmkit.drawing import LLMEdge, RuleEdge, draw_session, draw_swarm, swarm_edges
from swarmkit.journal import InMemoryJournal, JournalRecord
from swarmkit.testing import NeverCalledModel, ScriptedModel, text, transfer


class Refund(BaseModel):
    """A typed payload."""

    invoice_id: str


def _swarm(order: tuple[str, ...] = ("triage", "billing", "tech")) -> Swarm:
    graph = HandoffGraph()
    graph.add_edge("triage", "billing", when="category == 'billing'")
    graph.add_edge("triage", "tech", when="category == 'tech'", priority=5)
    agents = {
        "triage": Agent(name="triage", handoffs=[Handoff(agent="billing", input_type=Refund)]),
        "billing": Agent(name="billing", handoffs=["tech"]),
        "tech": Agent(name="tech", handoffs=[]),
    }
    return Swarm([agents[name] for name in order], "triage", model=ScriptedModel(), graph=graph)


def test_swarm_edges_are_the_rules_in_evaluation_order_then_the_llm_handoffs() -> None:
    """Each agent's rules (number, condition, priority), then its LLM handoffs by target."""
    assert swarm_edges(_swarm()) == (
        LLMEdge(source="billing", target="tech"),
        RuleEdge(
            source="triage", target="tech", number=1, condition="category == 'tech'", priority=5
        ),
        RuleEdge(source="triage", target="billing", number=2, condition="category == 'billing'"),
        LLMEdge(source="triage", target="billing", payload_type="Refund"),
    )


def test_swarm_drawing_in_mermaid_shows_rules_dashed_and_llm_handoffs_solid() -> None:
    """Rules are dashed and numbered in evaluation order; typed handoffs name their payload."""
    assert draw_swarm(_swarm()) == (
        "flowchart LR\n"
        "    %% dashed: rule edge (HandoffGraph condition, no model call); solid: LLM handoff\n"
        '    n0["billing"]\n'
        '    n1["tech"]\n'
        '    n2(["triage"])\n'
        "    n2 -.->|\"rule 1: category == 'tech' (priority 5)\"| n1\n"
        "    n2 -.->|\"rule 2: category == 'billing'\"| n0\n"
        "    n0 --> n1\n"
        '    n2 -->|"Refund"| n0\n'
    )


def test_swarm_drawing_in_ascii_lists_each_agents_edges_under_it() -> None:
    """The terminal drawing: rules as ==> in evaluation order, LLM handoffs as -->."""
    assert draw_swarm(_swarm(), "ascii") == (
        "# ==>: rule edge (HandoffGraph condition, no model call); -->: LLM handoff\n"
        "[billing]\n"
        "  --> tech\n"
        "[tech]\n"
        "[[triage]]\n"
        "  ==> tech  (rule 1: category == 'tech' (priority 5))\n"
        "  ==> billing  (rule 2: category == 'billing')\n"
        "  --> billing  (Refund)\n"
    )


def test_swarm_drawing_in_dot() -> None:
    """DOT marks the entry agent, dashes rule edges and labels them with their conditions."""
    assert draw_swarm(_swarm(), "dot") == (
        "digraph swarm {\n"
        "    // dashed: rule edge (HandoffGraph condition, no model call); solid: LLM handoff\n"
        "    rankdir=LR;\n"
        "    node [shape=box];\n"
        '    n0 [label="billing"];\n'
        '    n1 [label="tech"];\n'
        '    n2 [label="triage", peripheries=2];\n'
        "    n2 -> n1 [label=\"rule 1: category == 'tech' (priority 5)\", style=dashed];\n"
        "    n2 -> n0 [label=\"rule 2: category == 'billing'\", style=dashed];\n"
        "    n0 -> n1;\n"
        '    n2 -> n0 [label="Refund"];\n'
        "}\n"
    )


def test_swarm_drawing_does_not_depend_on_the_order_agents_were_given() -> None:
    """Agents and LLM edges are sorted, so the same swarm always draws the same."""
    assert draw_swarm(_swarm(("tech", "billing", "triage"))) == draw_swarm(_swarm())


def test_default_handoffs_draw_an_edge_to_every_other_peer() -> None:
    """handoffs=None means every other peer, never the agent itself."""
    swarm = Swarm([Agent(name="a"), Agent(name="b")], "a", model=ScriptedModel())
    drawing = draw_swarm(swarm)
    assert "n0 --> n1" in drawing and "n1 --> n0" in drawing
    assert "n0 --> n0" not in drawing


def test_mermaid_labels_are_escaped() -> None:
    """Quotes, #, <, > and | in names and conditions cannot break the Mermaid syntax."""
    graph = HandoffGraph()
    graph.add_edge('a"<x>', "b|#", when='name == "q|#"')
    agents = [Agent(name='a"<x>', handoffs=[]), Agent(name="b|#", handoffs=[])]
    drawing = draw_swarm(Swarm(agents, 'a"<x>', model=ScriptedModel(), graph=graph))
    assert 'n0(["a#34;#60;x#62;"])' in drawing
    assert 'n1["b#124;#35;"]' in drawing
    assert '-.->|"rule 1: name == #34;q#124;#35;#34;"|' in drawing


def test_dot_labels_are_escaped() -> None:
    """Quotes and backslashes are escaped and control characters dropped in DOT labels."""
    graph = HandoffGraph()
    graph.add_edge('say "hi"\n', "b", when='path == "C:\\\\x"')
    agents = [Agent(name='say "hi"\n', handoffs=[]), Agent(name="b", handoffs=[])]
    drawing = draw_swarm(Swarm(agents, 'say "hi"\n', model=ScriptedModel(), graph=graph), "dot")
    assert '[label="say \\"hi\\" ", peripheries=2]' in drawing
    assert '[label="rule 1: path == \\"C:\\\\\\\\x\\"", style=dashed]' in drawing


async def _records(model: ScriptedModel, **context: str) -> tuple[JournalRecord, ...]:
    journal = InMemoryJournal()
    result = await _swarm().with_model(model).run("help", context=context, journal=journal)
    return await journal.read(result.session_id)


async def test_session_drawing_numbers_each_handoff_and_ends_with_the_stop_reason() -> None:
    """A rule handoff is dashed, an LLM one solid, numbered in order, then the stop reason."""
    records = await _records(ScriptedModel(transfer("tech"), text("fixed")), category="billing")
    assert draw_session(records) == (
        "flowchart LR\n"
        "    %% the path of one run: edges numbered in order; dashed: decided by a rule\n"
        '    s0(["triage"])\n'
        '    s1["billing"]\n'
        '    s2["tech"]\n'
        '    done(("stop: final_output"))\n'
        "    s0 -.->|\"(1) rule: category == 'billing'\"| s1\n"
        '    s1 -->|"(2) llm"| s2\n'
        "    s2 --> done\n"
    )


async def test_session_drawing_in_dot_marks_typed_payloads() -> None:
    """An LLM handoff with a payload says so; DOT draws the same path."""
    records = await _records(ScriptedModel(transfer("billing", invoice_id="A-1"), text("ok")))
    assert draw_session(records, "dot") == (
        "digraph session {\n"
        "    // the path of one run: edges numbered in order; dashed: decided by a rule\n"
        "    rankdir=LR;\n"
        "    node [shape=box];\n"
        '    s0 [label="triage", peripheries=2];\n'
        '    s1 [label="billing"];\n'
        '    done [label="stop: final_output", shape=ellipse];\n'
        '    s0 -> s1 [label="(1) llm + payload"];\n'
        "    s1 -> done;\n"
        "}\n"
    )


async def test_unfinished_session_is_drawn_as_not_finished() -> None:
    """A session without run_finished (a crash) ends in "not finished"."""
    records = await _records(ScriptedModel(text("hi")))
    assert '(("not finished"))' in draw_session(records[:-1])


def test_unknown_format_is_a_configuration_error() -> None:
    """Only mermaid, dot and ascii are drawn."""
    with pytest.raises(ConfigurationError, match="mermaid, dot, ascii"):
        draw_swarm(_swarm(), "png")  # type: ignore[arg-type]


def test_no_records_is_a_journal_error() -> None:
    """An empty session has nothing to draw."""
    with pytest.raises(JournalError, match="nothing to draw"):
        draw_session(())


def test_an_llm_edge_shows_its_available_when_condition() -> None:
    """A handoff offered by rule is drawn with the rule on its edge."""
    a = Agent(name="a", handoffs=[Handoff(agent="b", available_when="verified == true")])
    swarm = Swarm([a, Agent(name="b")], "a", model=NeverCalledModel())

    assert "when verified == true" in draw_swarm(swarm, "dot")
