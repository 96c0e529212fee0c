"""The demo's support swarm on DemoModel, and the demo runner."""

from __future__ import annotations

import io
from pathlib import Path

from swarmkit import RunContext
from swarmkit.demo import DemoModel, RefundRequest, build_support_swarm, issue_refund, run_demo
from swarmkit.journal import SQLiteJournal
from swarmkit.messages import ToolMessage
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.result import RunResult

REFUND = "Hi, I was charged twice for invoice INV-1042 this month. Please refund it."


def _tool_results(result: RunResult) -> list[tuple[str, bool]]:
    """(name, failed) of each function tool call, transfer tools left out."""
    return [
        (m.name, m.is_error)
        for m in result.messages
        if isinstance(m, ToolMessage) and not m.name.startswith("transfer_to_")
    ]


def test_demo_model_says_it_is_a_stand_in() -> None:
    """Its name says it is deterministic and not an LLM."""
    name = DemoModel().name
    assert "deterministic stand-in" in name and "not an LLM" in name


async def test_rule_routes_an_outage_without_a_triage_model_call() -> None:
    """category == 'outage' hands off by rule; tech support checks status and opens a ticket."""
    model = DemoModel()
    swarm = build_support_swarm(model)

    result = await swarm.run("The dashboard shows 502 errors.", context={"category": "outage"})

    assert [request.agent for request in model.requests] == ["tech_support"] * 3
    assert [(h.target, h.decided_by, h.condition) for h in result.handoffs] == [
        ("tech_support", "rule", "category == 'outage'")
    ]
    assert _tool_results(result) == [("check_service_status", False), ("open_ticket", False)]
    assert result.stop_reason == "final_output"
    assert result.final_output is not None and "INC-2207" in result.final_output
    assert "triage" not in result.usage


async def test_rule_routes_a_billing_question_to_billing() -> None:
    """category == 'billing' reaches billing, which looks the invoice up and explains it."""
    model = DemoModel()
    result = await build_support_swarm(model).run(
        "Why is invoice INV-2001 higher than last month?", context={"category": "billing"}
    )

    assert result.trail == ("triage", "billing")
    assert [request.agent for request in model.requests] == ["billing", "billing"]
    assert _tool_results(result) == [("lookup_invoice", False)]
    assert result.final_output is not None and "5 extra seats" in result.final_output


async def test_refund_is_handed_to_billing_with_a_validated_payload() -> None:
    """Triage looks the invoice up, then transfers with a RefundRequest that billing uses."""
    model = DemoModel()
    result = await build_support_swarm(model).run(REFUND)

    [handoff] = result.handoffs
    assert (handoff.source, handoff.target, handoff.decided_by) == ("triage", "billing", "llm")
    assert handoff.payload is not None
    payload = RefundRequest.model_validate(handoff.payload)
    assert payload == RefundRequest(
        invoice_id="INV-1042", amount_eur=49.0, reason="duplicate_charge"
    )
    assert _tool_results(result) == [("lookup_invoice", False), ("issue_refund", False)]
    billing_prompt = model.requests[2].messages[0].content
    assert "Handoff payload (RefundRequest)" in str(billing_prompt)
    assert result.final_output is not None and result.final_output.startswith("Done: refund RF-")


async def test_a_request_for_a_person_goes_to_the_human_desk() -> None:
    """Asking for a person transfers to human, which opens a ticket in the human queue."""
    result = await build_support_swarm(DemoModel()).run(
        "I want to speak to a person about closing my account."
    )

    assert result.trail == ("triage", "human")
    assert result.handoffs[0].message is not None
    assert _tool_results(result) == [("open_ticket", False)]
    assert result.final_output is not None and "T-" in result.final_output


async def test_unknown_invoice_goes_back_to_the_model_as_a_tool_error() -> None:
    """A failing tool does not crash the run; triage asks for the right number."""
    result = await build_support_swarm(DemoModel()).run("Please refund invoice INV-9999.")

    assert _tool_results(result) == [("lookup_invoice", True)]
    assert result.trail == ("triage",)
    assert result.final_output is not None and "invoice number" in result.final_output


async def test_refund_larger_than_the_invoice_is_refused() -> None:
    """issue_refund checks the amount against the invoice."""
    context = RunContext(context={}, agent="billing", session_id="s")
    arguments = '{"invoice_id": "INV-1042", "amount_eur": 500, "reason": "other"}'

    outcome = await issue_refund.invoke(arguments, context)

    assert outcome.is_error
    assert "not between 0 and the invoice's 49.00 EUR" in outcome.content


async def test_usage_is_derived_from_text_so_runs_repeat_exactly() -> None:
    """Two runs of the same ticket report the same tokens and answer."""
    first = await build_support_swarm(DemoModel()).run(REFUND)
    second = await build_support_swarm(DemoModel()).run(REFUND)

    assert first.usage == second.usage
    assert first.final_output == second.final_output
    assert first.total_usage.total_tokens > 0


async def test_run_demo_replays_every_ticket_with_zero_model_calls(tmp_path: Path) -> None:
    """The demo runs three tickets, journals them, and reproduces each one on replay."""
    out = io.StringIO()
    journal_path = tmp_path / "demo" / "journal.sqlite"

    assert await run_demo(out, journal_path=journal_path) == 0

    text = out.getvalue()
    assert "deterministic stand-in" in text
    assert text.count("0 model calls made") == 3
    assert "same answer, trail and handoffs" in text
    with SQLiteJournal(journal_path) as journal:
        sessions = {info.session_id: info.stop_reason for info in await journal.sessions()}
    assert sessions == {
        "demo-outage-1": "final_output",
        "demo-refund-1": "final_output",
        "demo-escalation-1": "final_output",
    }


async def test_run_demo_again_numbers_new_sessions(tmp_path: Path) -> None:
    """A second demo into the same journal gets fresh session ids."""
    journal_path = tmp_path / "demo.sqlite"
    await run_demo(io.StringIO(), journal_path=journal_path)
    out = io.StringIO()

    assert await run_demo(out, journal_path=journal_path) == 0
    assert "session: demo-outage-2" in out.getvalue()


class _LiveLike:
    """A model that is not the stand-in (it delegates to one)."""

    name = "gpt-test"

    def __init__(self) -> None:
        self._inner = DemoModel()

    async def respond(self, request: ModelRequest) -> ModelResponse:
        return await self._inner.respond(request)


async def test_run_demo_names_a_live_model_in_its_header(tmp_path: Path) -> None:
    """With another model the header says which one, and that it is live."""
    out = io.StringIO()
    assert await run_demo(out, journal_path=tmp_path / "j.sqlite", model=_LiveLike()) == 0
    assert "model:   gpt-test (live, through the API)" in out.getvalue()
