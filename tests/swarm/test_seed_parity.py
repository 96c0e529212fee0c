"""Seed 001, 003 and 004 features: budgets that continue, typed rule handoffs, pauses after
an agent and questions from tools; every run replays exactly."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from swarmkit import Agent, ConfigurationError, Handoff, HandoffGraph, Swarm, approve, edit, reject
from swarmkit.graph import ON_FAILURE, ON_SUCCESS
from swarmkit.journal import InMemoryJournal, Journal
from swarmkit.testing import NeverCalledModel, ScriptedModel, text, tool_call, transfer
from swarmkit.tools import ToolResult, tool


class Refund(BaseModel):
    """A refund for an invoice."""

    invoice_id: str
    amount_eur: int


@tool
def fetch_ticket(number: int) -> dict[str, Any]:
    """Fetch a support ticket."""
    return {"invoice": f"INV-{number}", "amount": 30 if number else "unknown"}


@tool
def confirm_with_customer(question: str) -> ToolResult:
    """Ask the customer something through a person."""
    return ToolResult(ask=question)


async def _replays(swarm: Swarm, result: Any, journal: InMemoryJournal) -> None:
    replayed = await swarm.with_model(NeverCalledModel()).replay(result.session_id, journal)
    assert replayed == result


async def test_a_spent_budget_continues_to_the_then_agent_as_a_recorded_decision() -> None:
    """Seed 001: once a's budget is spent, the run goes on to c with no model call for a."""
    journal = InMemoryJournal()
    a = Agent(name="a", handoffs=["b", "c"], handoff_budget=1, then="c")
    b = Agent(name="b", handoffs=["a"])
    c = Agent(name="c", handoffs=[])
    model = ScriptedModel(transfer("b"), transfer("a"), text("written"))
    swarm = Swarm([a, b, c], "a", model=model, journal=journal, max_revisits=1)
    result = await swarm.run("go")
    assert [(h.source, h.target, h.decided_by) for h in result.handoffs] == [
        ("a", "b", "llm"),
        ("b", "a", "llm"),
        ("a", "c", "budget"),
    ]
    assert (result.final_agent, result.final_output, result.turns) == ("c", "written", 3)
    await _replays(swarm, result, journal)


def test_then_needs_a_budget_and_a_member_of_the_swarm() -> None:
    """then= without handoff_budget, or naming an outsider, is refused at construction."""
    with pytest.raises(ConfigurationError, match="handoff_budget"):
        Agent(name="a", then="c")
    with pytest.raises(ConfigurationError, match="add that agent"):
        Swarm([Agent(name="a", handoff_budget=1, then="z")], "a", model=ScriptedModel())


def _billing_swarm(journal: Journal, *turns: Any) -> Swarm:
    graph = HandoffGraph()
    graph.add_edge(
        "triage",
        "billing",
        when=ON_SUCCESS,
        input_mapping={"invoice_id": "invoice", "amount_eur": "amount"},
    )
    graph.add_edge("triage", "human", when=ON_FAILURE)
    billing = Agent(name="billing", handoffs=[])
    human = Agent(name="human", handoffs=[])
    triage = Agent(
        name="triage",
        tools=[fetch_ticket],
        handoffs=[Handoff(agent=billing, input_type=Refund), human],
    )
    return Swarm(
        [triage, billing, human],
        "triage",
        model=ScriptedModel(*turns),
        graph=graph,
        journal=journal,
    )


async def test_a_rule_handoff_builds_its_typed_payload_from_the_last_tool_output() -> None:
    """Seed 004: the edge's input_mapping fills Refund; billing receives it."""
    journal = InMemoryJournal()
    swarm = _billing_swarm(journal, tool_call("fetch_ticket", number=7), text("Refunded."))
    result = await swarm.run("refund please")
    assert [(h.target, h.decided_by, h.payload) for h in result.handoffs] == [
        ("billing", "rule", {"invoice_id": "INV-7", "amount_eur": 30}),
    ]
    assert result.rule_decisions[0].condition == ON_SUCCESS
    await _replays(swarm, result, journal)


async def test_a_mapping_that_does_not_validate_is_a_refusal_and_the_model_decides() -> None:
    """An amount of "unknown" fails Refund: the rule is refused with the error, not a crash."""
    journal = InMemoryJournal()
    swarm = _billing_swarm(
        journal, tool_call("fetch_ticket", number=0), text("I need the amount first.")
    )
    result = await swarm.run("refund please")
    assert result.handoffs == ()
    assert result.rule_decisions[0].performed is False
    assert "amount_eur" in result.refusals[0]
    assert result.final_output == "I need the amount first."
    await _replays(swarm, result, journal)


def test_an_input_mapping_must_map_names_to_paths() -> None:
    """A mapping of other shapes is a ConfigurationError at add_edge."""
    with pytest.raises(ConfigurationError, match="input_mapping"):
        HandoffGraph().add_edge("a", "b", input_mapping={"x": 3})  # type: ignore[dict-item]


async def test_interrupt_after_pauses_on_the_answer_and_a_person_can_edit_or_reject_it() -> None:
    """Seed 003: the answer waits; reject sends the agent back, edit replaces the answer."""
    journal = InMemoryJournal()
    writer = Agent(name="writer", handoffs=[])
    model = ScriptedModel(text("draft one"), text("draft two"))
    swarm = Swarm([writer], "writer", model=model, journal=journal, interrupt_after=["writer"])
    paused = await swarm.run("write", session_id="s")
    assert paused.stop_reason == "interrupted"
    assert paused.pending is not None
    assert (paused.pending.kind, paused.pending.payload) == ("answer", {"output": "draft one"})

    again = await swarm.resume("s", decision=reject("shorter, please"))
    assert again.stop_reason == "interrupted"
    assert again.pending is not None and again.pending.payload == {"output": "draft two"}
    done = await swarm.resume("s", decision=edit(payload={"output": "final"}))
    assert (done.stop_reason, done.final_output) == ("final_output", "final")
    assert "shorter, please" in [getattr(m, "content", None) for m in done.messages]


async def test_a_tool_question_pauses_and_the_answer_becomes_the_tool_result() -> None:
    """A tool returning ToolResult(ask=...) waits for a person; their answer is the result."""
    journal = InMemoryJournal()
    agent = Agent(name="agent", tools=[confirm_with_customer], handoffs=[])
    model = ScriptedModel(
        tool_call("confirm_with_customer", question="Ship to the new address?"), text("Shipped.")
    )
    swarm = Swarm([agent], "agent", model=model, journal=journal)
    paused = await swarm.run("ship it", session_id="q")
    assert paused.pending is not None
    assert paused.pending.kind == "question"
    assert paused.pending.payload == {"question": "Ship to the new address?"}
    done = await swarm.resume("q", decision=edit(payload={"answer": "yes, the new one"}))
    results = [m for m in done.messages if m.kind == "tool"]
    assert [r.content for r in results] == ["yes, the new one"]
    assert done.final_output == "Shipped."
    await _replays(swarm, done, journal)


async def test_approving_an_answer_finishes_the_run_with_it() -> None:
    """approve() keeps the agent's answer."""
    journal = InMemoryJournal()
    swarm = Swarm(
        [Agent(name="w", handoffs=[])],
        "w",
        model=ScriptedModel(text("ok")),
        journal=journal,
        interrupt_after=["w"],
    )
    await swarm.run("x", session_id="s")
    done = await swarm.resume("s", decision=approve())
    assert (done.stop_reason, done.final_output) == ("final_output", "ok")


def _tiered(journal: InMemoryJournal, model: ScriptedModel) -> Swarm:
    graph = HandoffGraph()
    graph.add_edge("triage", "vip", when="tier == 'gold'")
    triage = Agent(name="triage", tools=[fetch_ticket], handoffs=["vip"])
    vip = Agent(name="vip", handoffs=[])
    return Swarm([triage, vip], "triage", model=model, graph=graph, journal=journal)


async def test_history_lists_the_state_after_each_step() -> None:
    """Seed 003's state history: agent, context, handoffs, turns and messages per step."""
    journal = InMemoryJournal()
    model = ScriptedModel(tool_call("fetch_ticket", number=7), text("Here you go."))
    swarm = _tiered(journal, model)
    result = await swarm.run("help", context={"tier": "basic"}, session_id="s")
    states = await swarm.with_model(NeverCalledModel()).history("s", journal)

    assert [s.step for s in states] == list(range(len(await journal.read("s"))))
    assert [s.kind for s in states][:4] == [
        "run_started",
        "agent_started",
        "model_call",
        "tool_call",
    ]
    assert [len(s.messages) for s in states[1:4]] == [1, 2, 3]
    assert states[-1].messages == result.messages
    assert all(s.context == {"tier": "basic"} and s.agent == "triage" for s in states)


@tool
def note_city(city: str) -> ToolResult:
    """Remember the customer's city."""
    return ToolResult(output=f"noted {city}", update={"city": city})


def _handing_off(journal: InMemoryJournal, model: ScriptedModel) -> Swarm:
    a = Agent(name="a", tools=[note_city], handoffs=["b"])
    return Swarm([a, Agent(name="b", handoffs=[])], "a", model=model, journal=journal)


async def test_history_lists_only_states_that_existed_around_a_tool_call_and_a_handoff() -> None:
    """No state is taken mid-step: a model call or a handoff counts once its step is done."""
    journal = InMemoryJournal()
    script = ScriptedModel(tool_call("note_city", city="Oslo"), transfer("b"), text("Done."))
    await _handing_off(journal, script).run("go", session_id="s")
    states = await _handing_off(journal, ScriptedModel()).history("s", journal)

    table = [
        (s.step, s.kind, s.agent, s.handoff_count, s.turns, [m.kind for m in s.messages])
        for s in states
    ]
    asked, told = ["user", "assistant"], ["user", "assistant", "tool", "assistant"]
    assert table == [
        (0, "run_started", "a", 0, 0, ["user"]),
        (1, "agent_started", "a", 0, 0, ["user"]),
        (2, "model_call", "a", 0, 1, asked),
        (3, "tool_call", "a", 0, 1, [*asked, "tool"]),
        (4, "model_call", "a", 0, 2, told),
        (5, "handoff", "b", 1, 2, told),
        (6, "agent_started", "b", 1, 2, [*told, "tool"]),
        (7, "model_call", "b", 1, 3, [*told, "tool", "assistant"]),
        (8, "run_finished", "b", 1, 3, [*told, "tool", "assistant"]),
    ]
    assert [s.context for s in states[2:4]] == [{}, {"city": "Oslo"}]


async def test_a_fork_at_a_listed_state_starts_from_exactly_that_state() -> None:
    """Forked after a's transfer call (no handoff yet): the fork performs handoff #1 live."""
    journal = InMemoryJournal()
    script = ScriptedModel(tool_call("note_city", city="Oslo"), transfer("b"), text("Done."))
    await _handing_off(journal, script).run("go", session_id="s")
    states = await _handing_off(journal, ScriptedModel()).history("s", journal)
    fork_model = ScriptedModel(text("Forked."))

    forked = await _handing_off(journal, fork_model).fork("s", at=4, context_update={"vip": 1})

    assert (states[4].agent, states[4].handoff_count, states[4].turns) == ("a", 0, 2)
    assert [(h.source, h.target, h.number) for h in forked.handoffs] == [("a", "b", 1)]
    assert forked.turns == states[4].turns + len(fork_model.requests)
    assert forked.context == {**states[4].context, "vip": 1}
    fork_states = await _handing_off(journal, ScriptedModel()).history(forked.session_id)
    shown = [(s.agent, s.context, s.handoff_count, s.turns, s.messages) for s in fork_states]
    assert shown[:5] == [
        (s.agent, s.context, s.handoff_count, s.turns, s.messages) for s in states[:5]
    ]
    assert (fork_states[5].kind, fork_states[5].context) == ("state_edited", forked.context)


async def test_a_fork_from_an_edited_state_goes_its_own_way_and_replays_exactly() -> None:
    """Fork after the tool call with tier=gold: the rule now fires; the fork replays."""
    journal = InMemoryJournal()
    model = ScriptedModel(tool_call("fetch_ticket", number=7), text("Here you go."))
    swarm = _tiered(journal, model)
    original = await swarm.run("help", context={"tier": "basic"}, session_id="s")
    assert original.trail == ("triage",)

    forked = await _tiered(journal, ScriptedModel(text("Welcome, gold member."))).fork(
        "s", at=3, context_update={"tier": "gold"}
    )
    assert forked.session_id == "s__fork_3"
    assert forked.trail == ("triage", "vip")
    assert forked.context["tier"] == "gold"
    assert forked.final_output == "Welcome, gold member."
    edited = [r for r in await journal.read("s__fork_3") if r.kind == "state_edited"]
    assert [r.data["forked_from"] for r in edited] == ["s"]
    await _replays(_tiered(journal, ScriptedModel()), forked, journal)


async def test_a_refused_mapping_is_journaled_with_its_validation_error() -> None:
    """The handoff_refused record's detail names the field that failed and why."""
    journal = InMemoryJournal()
    swarm = _billing_swarm(journal, tool_call("fetch_ticket", number=0), text("Amount?"))
    result = await swarm.run("refund please", session_id="mapped")
    records = await journal.read("mapped")
    refused = [r.data for r in records if r.kind == "handoff_refused"]
    assert [(d["target"], d["reason"], d["decided_by"]) for d in refused] == [
        ("billing", "payload", "rule")
    ]
    assert "amount_eur" in refused[0]["detail"]
    assert refused[0]["detail"] == result.refusals[0]
