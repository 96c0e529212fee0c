"""Pause for a human before a refund, then resume from the journal without repeating anything.

``issue_refund`` is a tool with ``needs_approval=True``: when billing calls it, the run stops
with ``stop_reason="interrupted"`` and ``result.pending`` says what waits for a decision.
The run is journaled to SQLite, so it can be resumed later, even by another process:
``swarm.resume(session_id, decision=approve())`` replays the journaled steps and makes only
the model calls that remain. (Use ``interrupt_before=["billing"]`` to pause before an agent.)

Run it offline (a scripted model plays the LLM):   python examples/resume_after_interrupt.py
or live:   OPENAI_API_KEY=sk-... [SWARMKIT_MODEL=gpt-4o] python examples/resume_after_interrupt.py
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

from swarmkit import Agent, Model, OpenAIModel, RunResult, Swarm, approve, tool
from swarmkit.journal import SQLiteJournal
from swarmkit.testing import RecordingModel, ScriptedModel, text, tool_call, transfer

REFUNDS: list[str] = []  # what issue_refund really did, to show it ran once


@tool
def lookup_invoice(invoice_id: str) -> str:
    """Look up an invoice.

    Args:
        invoice_id: The invoice id, e.g. INV-7.
    """
    return f"{invoice_id}: 30.00 EUR, paid by card"


@tool(needs_approval=True)
def issue_refund(invoice_id: str, amount_eur: float) -> str:
    """Refund an invoice to the customer's card.

    Args:
        invoice_id: The invoice to refund.
        amount_eur: How much to refund, in euros.
    """
    REFUNDS.append(invoice_id)
    return f"refunded {amount_eur:.2f} EUR on {invoice_id}"


billing = Agent(
    name="billing",
    instructions="Look the invoice up, refund it, then confirm to the customer.",
    tools=[lookup_invoice, issue_refund],
    handoffs=[],
)
triage = Agent(name="triage", instructions="Send refund requests to billing.", handoffs=[billing])


def offline_model() -> ScriptedModel:
    """The scripted model plays the LLM's part offline: the turns a real model would take."""
    return ScriptedModel(
        transfer("billing"),
        tool_call("lookup_invoice", invoice_id="INV-7"),
        tool_call("issue_refund", invoice_id="INV-7", amount_eur=30.0),
        text("Done: 30.00 EUR is on its way back to your card."),
    )


def pick_model() -> Model:
    """The real API when OPENAI_API_KEY is set, else the scripted stand-in."""
    if os.environ.get("OPENAI_API_KEY"):
        return OpenAIModel(os.environ.get("SWARMKIT_MODEL", "gpt-4o-mini"))
    return offline_model()


async def main() -> tuple[RunResult, RunResult, int]:
    """Pause at the refund, approve, resume; returns both results and the calls made on resume."""
    model = RecordingModel(pick_model())
    with tempfile.TemporaryDirectory() as folder, SQLiteJournal(Path(folder) / "j.db") as journal:
        swarm = Swarm([triage, billing], "triage", model=model, journal=journal)

        paused = await swarm.run("Refund invoice INV-7, please.")
        calls_before = model.calls
        pending = paused.pending
        assert pending is not None
        print(f"stop: {paused.stop_reason}; {pending.agent} waits for approval of")
        print(f"  {pending.kind} {pending.tool_name} with {pending.payload}")
        print(f"model calls so far: {calls_before}; refunds issued: {len(REFUNDS)}")

        # Later, perhaps in another process with the same journal file:
        resumed = await swarm.resume(paused.session_id, decision=approve())
        calls_after = model.calls - calls_before
        print(f"\nresumed: {resumed.stop_reason}; trail {' -> '.join(resumed.trail)}")
        print(f"model calls on resume: {calls_after} (the {calls_before} journaled were replayed)")
        print(f"refunds issued: {len(REFUNDS)}\nanswer: {resumed.final_output}")
    return paused, resumed, calls_after


if __name__ == "__main__":
    asyncio.run(main())
