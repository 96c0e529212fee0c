"""Every example runs offline as it is and does what its docstring says."""

from __future__ import annotations

from pathlib import Path

import pytest

from examples import (
    mcp_tools,
    replay_in_tests,
    research_loop,
    resume_after_interrupt,
    rule_routing,
    support_triage,
    tracing,
    two_swarms_over_a2a,
    typed_handoffs,
)


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Examples pick the scripted model when no API key is set."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


async def test_support_triage_routes_known_category_by_rule_and_the_rest_by_llm() -> None:
    """A billing ticket goes by rule with no triage call; others carry the LLM's typed payload."""
    by_rule, to_tech, to_human = await support_triage.main()

    assert [(h.target, h.decided_by) for h in by_rule.handoffs] == [("billing", "rule")]
    assert "triage" not in by_rule.usage
    assert to_tech.handoffs[0].payload == {
        "product": "Desktop app",
        "symptom": "export crashes",
        "severity": "blocking",
    }
    assert "3.2.1" in (to_tech.final_output or "")
    assert to_human.trail == ("triage", "human")
    assert all(r.stop_reason == "final_output" for r in (by_rule, to_tech, to_human))


async def test_research_loop_continues_to_the_writer_once_the_budget_is_spent() -> None:
    """The checker's two handoffs spend its budget; then=doc_generator decides the third."""
    result, model = await research_loop.main()

    checker_turns = [r for r in model.requests if r.agent == "progress_checker"]
    assert len(checker_turns) == 2
    assert [
        (h.target, h.decided_by) for h in result.handoffs if h.source == "progress_checker"
    ] == [("deep_searcher", "llm"), ("deep_searcher", "llm"), ("doc_generator", "budget")]
    assert result.trail.count("deep_searcher") == 3
    assert result.final_agent == "doc_generator"
    assert result.stop_reason == "final_output"
    assert result.final_output == research_loop.DOCUMENT


async def test_typed_handoffs_deliver_nested_payloads_through_filters() -> None:
    """The nested Shipment reaches warehouse's tool; filters shape what each peer saw."""
    result, model = await typed_handoffs.main()

    shipment = result.handoffs[0].payload
    assert shipment is not None
    assert shipment["items"][1]["product"] == {"sku": "SKU-9", "name": "Cups (set of 4)"}
    assert shipment["speed"] == "express" and shipment["gift_note"] is None
    warehouse_saw = typed_handoffs.first_request(model, "warehouse").messages[1:]
    assert [m.kind for m in warehouse_saw] == ["user", "assistant"]
    courier_saw = typed_handoffs.first_request(model, "courier").messages[1:]
    assert [m.content for m in courier_saw] == ["Collect 2 parcels for B-77 (express)."]
    packed = "packed 3 items of B-77 into 2 parcels (express)"
    assert packed in [m.content for m in result.messages]


async def test_rule_routing_routes_every_ticket_with_no_triage_model_call() -> None:
    """Each ticket lands where its rule says, and triage never calls its model."""
    results = await rule_routing.main()

    assert [r.trail[-1] for r in results] == ["human", "billing", "billing", "tech", "general"]
    assert all(r.handoffs[0].decided_by == "rule" for r in results)
    assert all("triage" not in r.usage for r in results)


def test_rule_routing_explain_names_the_edge_that_fired() -> None:
    """explain() for the export ticket says the tech edge matched after three misses."""
    explanation = rule_routing.build_graph().explain("triage", rule_routing.TICKETS[3][1])

    assert explanation.target == "tech"
    assert [t.matched for t in explanation.trials] == [False, False, False, True]


async def test_replay_in_tests_records_a_fixture_and_replays_it(tmp_path: Path) -> None:
    """--record writes the JSONL fixture; replaying it gives the recorded answer."""
    fixture = tmp_path / "session.jsonl"

    result = await replay_in_tests.main(["--record"], fixture=fixture)

    assert fixture.read_text(encoding="utf-8").startswith('{"session_id": "support"')
    assert result.trail == ("triage", "billing")
    assert result.final_output == "Refunded 30.00 EUR for INV-7; it reaches your card in 3-5 days."


async def test_replay_in_tests_reads_the_committed_fixture() -> None:
    """Without --record the committed fixture is replayed, not rewritten."""
    before = replay_in_tests.FIXTURE.read_text(encoding="utf-8")

    result = await replay_in_tests.main()

    assert result.stop_reason == "final_output"
    assert replay_in_tests.FIXTURE.read_text(encoding="utf-8") == before


async def test_resume_after_interrupt_makes_only_the_remaining_model_calls() -> None:
    """The run pauses at the refund; resume(approve()) makes one call and refunds once."""
    refunds_before = len(resume_after_interrupt.REFUNDS)

    paused, resumed, calls_on_resume = await resume_after_interrupt.main()

    assert paused.stop_reason == "interrupted"
    assert paused.pending is not None and paused.pending.tool_name == "issue_refund"
    assert paused.turns == 3
    assert calls_on_resume == resumed.turns - paused.turns == 1
    assert resumed.stop_reason == "final_output"
    assert len(resume_after_interrupt.REFUNDS) - refunds_before == 1


async def test_mcp_tools_shares_one_server_and_replays_with_it_stopped() -> None:
    """Sales and the warehouse call the example's own MCP server; the replay needs no server."""
    result, replayed = await mcp_tools.main()

    answers = [(m.name, m.content) for m in result.messages if m.kind == "tool"]
    assert ("stock", "12") in answers
    assert ("reserve", "reserved 3 x SKU-9 for B-77") in answers
    assert result.trail == ("sales", "warehouse")
    assert replayed.final_output == result.final_output


async def test_tracing_prints_a_span_tree_per_run_and_the_same_tree_for_the_replay() -> None:
    """The rule-routed run has no triage model call; the replay repeats the LLM run's tree."""
    trees = await tracing.main()

    rule_routed = [line.split("  [")[0] for line in trees["rule-routed"]]
    assert rule_routed == [
        "invoke_workflow triage",
        "  invoke_agent triage",
        "    swarmkit.rule",
        "    transfer billing",
        "  invoke_agent billing",
        "    chat scripted",
    ]
    shapes = {name: [line.split("  [")[0] for line in lines] for name, lines in trees.items()}
    assert shapes["replay"] == shapes["llm-decided"]
    assert all("replay=True" in line for line in trees["replay"])


async def test_two_swarms_on_two_ports_hand_work_to_each_other_over_a2a() -> None:
    """The shop hands the warehouse a typed stock query; the customer's session replays with
    both servers gone."""
    result, replayed = await two_swarms_over_a2a.main()

    assert result.trail == ("assistant", "shop")
    assert result.final_output == "12 of A-1 left."
    assert result.stop_reason == "final_output"
    assert replayed.final_output == result.final_output
    assert replayed.trail == result.trail
