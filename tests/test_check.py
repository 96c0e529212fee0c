"""swarm.check(): each finding from a swarm built with the fault, and clean swarms pass."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Literal

import pytest
from pydantic import BaseModel

from swarmkit import Agent, Handoff, HandoffGraph, Swarm, tool
from swarmkit.check import Finding
from swarmkit.demo._support import build_support_swarm
from swarmkit.testing import NeverCalledModel

MODEL = NeverCalledModel()


def _codes(swarm: Swarm) -> list[str]:
    return [f.code for f in swarm.check()]


def _graph(*edges: tuple[str, str, str | None]) -> HandoffGraph:
    graph = HandoffGraph(on_cycle="allow")
    for source, target, when in edges:
        graph.add_edge(source, target, when=when)
    return graph


def _swarm(graph: HandoffGraph | None = None, names: str = "abc", **options: object) -> Swarm:
    agents = [Agent(name=n) for n in names]
    return Swarm(agents, names[0], model=MODEL, graph=graph, **options)  # type: ignore[arg-type]


def _one(swarm: Swarm, code: str) -> Finding:
    found = [f for f in swarm.check() if f.code == code]
    assert len(found) == 1, swarm.check()
    return found[0]


class Ticket(BaseModel):
    """A declared context."""

    category: Literal["billing", "tech"]
    priority: int = 0
    customer: str = ""


def test_an_agent_no_path_reaches_is_reported() -> None:
    """c has no way in: a hands off only to b, and b to nobody."""
    agents = [Agent(name="a", handoffs=["b"]), Agent(name="b", handoffs=[]), Agent(name="c")]
    swarm = Swarm(agents, "a", model=MODEL)

    finding = _one(swarm, "unreachable_agent")

    assert (finding.severity, finding.where) == ("warning", "agent c")


def test_max_handoffs_zero_leaves_every_other_agent_unreachable() -> None:
    """With no handoffs allowed, only the entry agent ever runs."""
    assert _codes(_swarm(max_handoffs=0)).count("unreachable_agent") == 2


def test_an_edge_after_one_that_always_matches_is_shadowed() -> None:
    """An unconditional first edge makes the second one dead."""
    swarm = _swarm(_graph(("a", "b", None), ("a", "c", "x == 1")))

    finding = _one(swarm, "edge_shadowed")

    assert finding.severity == "error"
    assert "a -> c (rule 2" in finding.where


def test_an_edge_with_the_same_condition_as_an_earlier_one_is_shadowed() -> None:
    """Two edges with one condition: only the first ever fires."""
    swarm = _swarm(_graph(("a", "b", "x == 1"), ("a", "c", "x == 1")))

    assert _codes(swarm) == ["edge_shadowed"]


@pytest.mark.parametrize(
    "when",
    [
        "x == 1 and x == 2",
        "x == 'a' and x != 'a'",
        "x > 5 and x < 3",
        "x >= 2 and x <= 2 and x != 2",
        "x in ['a', 'b'] and x == 'c'",
        "x in 5",
        "false",
        "(x == 1 and x == 2) or (y > 1 and y < 1)",
        "not true",
        "x > 1 and x < 'b'",
        "(x == 1 or x == 2) and x == 3",
        "(x == 1 or y == 2) and x == 3 and y in ['a']",
    ],
)
def test_a_condition_false_for_every_state_is_reported(when: str) -> None:
    """Contradictions on one path make the edge dead."""
    swarm = _swarm(_graph(("a", "b", when), ("a", "c", None)))

    assert "condition_never_true" in _codes(swarm)


@pytest.mark.parametrize(
    "when",
    [
        "x == 1 and y == 2",
        "x > 1 and x < 3 and x != 2",
        "x == 1 or x == 2",
        "x != 1 and x != 2",
        "x == 1 and x == 1.0",
        "not (x < 1) and x < 0",
        "x in 'abc' and x != 'a'",
        "(x == 1 or x == 2) and x == 2",
        "(x == 1 or y == 2) and x == 3",
    ],
)
def test_a_condition_some_state_satisfies_is_not_reported(when: str) -> None:
    """The analysis never calls a satisfiable condition dead."""
    assert _codes(_swarm(_graph(("a", "b", when), ("a", "c", None)))) == []


def test_a_cycle_of_rules_that_always_fire_is_reported_with_its_policy() -> None:
    """a -> b -> a unconditionally: every run goes round; the policy says what happens."""
    swarm = _swarm(_graph(("a", "b", None), ("b", "a", None)), on_cycle="stop")

    finding = _one(swarm, "rule_cycle")

    assert finding.where == "graph cycle a -> b -> a"
    assert "on_cycle='stop'" in finding.message


def test_a_conditional_way_out_of_a_cycle_is_not_a_forced_cycle() -> None:
    """b leaves the loop when a flag is set, so the cycle is not forced."""
    graph = _graph(("a", "b", None), ("b", "c", "done == true"), ("b", "a", None))

    assert "rule_cycle" not in _codes(_swarm(graph))


def test_a_path_the_context_type_does_not_declare_is_reported_with_a_hint() -> None:
    """``priorty`` is not a field of Ticket; the nearest one is named."""
    swarm = _swarm(_graph(("a", "b", "priorty > 2")), context_type=Ticket)

    finding = _one(swarm, "undeclared_path")

    assert "'priority'" in finding.fix


def test_a_context_type_that_allows_extra_keys_has_no_undeclared_paths() -> None:
    """With extra="allow", any key may be there."""

    class Open(BaseModel, extra="allow"):
        """A context that keeps what it does not declare."""

        tier: str = ""

    assert _codes(_swarm(_graph(("a", "b", "anything > 2")), context_type=Open)) == []


def test_a_swarm_fact_that_does_not_exist_is_an_error() -> None:
    """``swarm.turns`` is not a fact (``swarm.turn`` is)."""
    finding = _one(_swarm(_graph(("a", "b", "swarm.turns > 2"))), "unknown_swarm_key")

    assert finding.severity == "error"
    assert "'turn'" in finding.fix


@pytest.mark.parametrize(
    "when",
    [
        "customer == 5",
        "priority == 'high'",
        "priority > 'a'",
        "category == 'refunds'",
        "'x' in priority",
        "swarm.agent == 'billling'",
        "swarm.turn == 'one'",
    ],
)
def test_a_comparison_that_can_never_hold_for_the_declared_types_is_an_error(when: str) -> None:
    """A str field against a number, ``in`` on a number, a value a Literal does not list."""
    swarm = _swarm(_graph(("a", "b", when)), context_type=Ticket)

    assert _codes(swarm) == ["impossible_comparison"]


@pytest.mark.parametrize(
    "when",
    [
        "customer == 'x'",
        "priority >= 2",
        "category in ['billing']",
        "swarm.agent == 'b'",
        "customer == null",
        "swarm.previous_agent == null",
    ],
)
def test_comparisons_that_fit_the_declared_types_pass(when: str) -> None:
    """Nothing is reported for comparisons that may hold."""
    assert _codes(_swarm(_graph(("a", "b", when)), context_type=Ticket)) == []


def test_an_available_when_that_never_holds_is_an_offer_never_made() -> None:
    """A handoff whose rule is always false is never offered, so its target is unreachable."""
    a = Agent(name="a", handoffs=[Handoff(agent="b", available_when="x == 1 and x == 2")])
    swarm = Swarm([a, Agent(name="b")], "a", model=MODEL)

    assert _codes(swarm) == ["never_offered", "unreachable_agent"]


def test_a_tool_whose_available_when_never_holds_is_reported() -> None:
    """Function tools are checked like handoffs."""

    @tool(available_when="swarm.last_tool_ok == 'yes'")
    def refund() -> str:
        """Refund."""
        return "ok"

    swarm = Swarm([Agent(name="a", tools=[refund])], "a", model=MODEL)

    finding = _one(swarm, "impossible_comparison")
    assert finding.where == "agent a: tool refund"


def test_findings_are_data() -> None:
    """A finding has a code, a severity, where, a message and a fix, as JSON-safe data."""
    finding = _one(_swarm(_graph(("a", "b", "swarm.nope"))), "unknown_swarm_key")

    assert set(finding.to_data()) == {"code", "severity", "where", "message", "fix"}
    assert str(finding).startswith("error: unknown_swarm_key at ")


def test_the_demo_swarm_passes_the_check() -> None:
    """The offline demo's swarm has nothing to report."""
    assert build_support_swarm(MODEL).check() == ()


@pytest.fixture
def built_swarms(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Swarm]]:
    """Every Swarm constructed while the fixture is active (the real constructor runs)."""
    built: list[Swarm] = []
    original = Swarm.__init__

    def keep(self: Swarm, *args: object, **kwargs: object) -> None:
        original(self, *args, **kwargs)  # type: ignore[arg-type]
        built.append(self)

    monkeypatch.setattr(Swarm, "__init__", keep)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yield built


async def test_every_example_swarm_passes_the_check_with_no_errors(
    built_swarms: list[Swarm],
) -> None:
    """Each example's swarm is checked as its main() builds it."""
    from examples import (  # noqa: PLC0415 - the examples package is only for this test
        replay_in_tests,
        research_loop,
        resume_after_interrupt,
        rule_routing,
        support_triage,
        typed_handoffs,
    )

    for example in (research_loop, resume_after_interrupt, rule_routing, support_triage):
        await example.main()
    await typed_handoffs.main()
    replay_in_tests.build_swarm(MODEL)

    assert len(built_swarms) >= 6
    assert [f for s in built_swarms for f in s.check() if f.severity == "error"] == []
    assert os.environ.get("OPENAI_API_KEY") is None


class Refund(BaseModel):
    """A payload with two required fields."""

    invoice_id: str
    amount_eur: float


def _mapped_swarm(mapping: dict[str, str], *, typed: bool = True) -> Swarm:
    graph = HandoffGraph()
    graph.add_edge("a", "b", when="x == 1", input_mapping=mapping)
    handoff = Handoff(agent="b", input_type=Refund) if typed else Handoff(agent="b")
    agents = [Agent(name="a", handoffs=[handoff]), Agent(name="b")]
    return Swarm(agents, "a", model=MODEL, graph=graph)


def test_an_input_mapping_that_leaves_a_required_field_out_is_an_error() -> None:
    """The rule's payload can never validate, so the rule never hands off."""
    finding = _one(_mapped_swarm({"invoice_id": "invoice"}), "input_mapping_incomplete")

    assert "amount_eur" in finding.message


def test_an_input_mapping_to_a_field_the_type_lacks_is_reported() -> None:
    """A mapped field Refund does not have is named, with the fields it has."""
    mapping = {"invoice_id": "invoice", "amount_eur": "amount", "amount": "amount"}

    finding = _one(_mapped_swarm(mapping), "input_mapping_unknown_field")

    assert "amount_eur, invoice_id" in finding.fix


def test_an_input_mapping_without_an_input_type_is_unused() -> None:
    """Nothing validates or receives the mapped payload."""
    swarm = _mapped_swarm({"invoice_id": "invoice"}, typed=False)

    assert _codes(swarm) == ["input_mapping_unused"]


def test_a_complete_input_mapping_passes() -> None:
    """Every required field mapped: nothing to report."""
    assert _codes(_mapped_swarm({"invoice_id": "invoice", "amount_eur": "amount"})) == []


def test_delegates_and_then_agents_are_reached() -> None:
    """An agent reached only as a delegate, or as a spent budget's then=, is not unreachable."""
    helper = Agent(name="helper")
    boss = Agent(name="boss", tools=[helper.as_tool()], handoffs=["worker"])
    worker = Agent(name="worker", handoffs=[], handoff_budget=0, then="closer")
    swarm = Swarm([boss, helper, worker, Agent(name="closer")], "boss", model=MODEL)

    assert "unreachable_agent" not in _codes(swarm)


def test_deeply_nested_and_long_conditions_are_analysed_without_error() -> None:
    """Nesting near the language's limit and a long chain of or-branches are handled."""
    nested = "x == 1 and x == 2"
    for _ in range(24):
        nested = f"not (not ({nested}))"
    chain = " and ".join(f"(x == {i} or x == {i + 1})" for i in range(500))
    swarm = _swarm(_graph(("a", "b", nested), ("a", "c", chain)))

    assert _codes(swarm) == ["condition_never_true", "condition_never_true"]


def test_a_leaf_left_to_the_default_offer_of_every_peer_is_warned_about() -> None:
    """triage lists its handoffs; billing, which it hands to, declares none and so is offered
    every peer: a warning with the fix. A swarm where no agent lists handoffs is a swarm of
    peers by design, and an agent that says handoffs=[] is a leaf that answers: no warning."""
    agents = [
        Agent(name="triage", handoffs=["billing", "tech"]),
        Agent(name="billing"),
        Agent(name="tech", handoffs=[]),
    ]
    swarm = Swarm(agents, "triage", model=MODEL)

    finding = _one(swarm, "leaf_offered_every_peer")

    assert (finding.severity, finding.where) == ("warning", "agent billing")
    assert "offered every peer (tech, triage)" in finding.message
    assert finding.fix.startswith("give it handoffs=[]")
    assert "leaf_offered_every_peer" not in _codes(_swarm())
    graph = HandoffGraph()
    graph.add_edge("a", "b", decided_by="llm")
    graph.add_edge("b", "c", decided_by="llm")
    assert [f.where for f in _swarm(graph).check() if f.code == "leaf_offered_every_peer"] == [
        "agent c"
    ]
