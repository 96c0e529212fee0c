"""Record a session once, replay it in tests: zero model calls, and a diff when the code drifts.

``build_swarm(model)`` builds the swarm; tests build the very same one. Running this file
records one support session to ``tests/fixtures/support_session.jsonl`` with
``record_fixture`` (only when the file is missing, or with ``--record``), then replays it with
a model that has no answers at all, to show that replay never asks one.
``tests/test_replay_fixture.py`` does the same in a test, and shows that a changed instruction
fails with ``ReplayDivergenceError`` instead of serving a stale answer.

Run it offline (a scripted model plays the LLM):   python examples/replay_in_tests.py [--record]
or record live:   OPENAI_API_KEY=sk-... python examples/replay_in_tests.py --record
(a live recording answers differently: update the test's expected output to match).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from swarmkit import Agent, Handoff, Model, OpenAIModel, RunResult, Swarm, tool
from swarmkit.testing import (
    ScriptedModel,
    record_fixture,
    replay_fixture,
    text,
    tool_call,
    transfer,
)

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "support_session.jsonl"
PROMPT = "Please refund invoice INV-7, I was billed for a cancelled plan."
BILLING_INSTRUCTIONS = "You handle refunds. Look the invoice up, then confirm the refund."


class RefundRequest(BaseModel):
    """What billing needs to refund an invoice."""

    invoice_id: str
    reason: str


@tool
def lookup_invoice(invoice_id: str) -> str:
    """Look up an invoice.

    Args:
        invoice_id: The invoice id, e.g. INV-7.
    """
    return f"{invoice_id}: 30.00 EUR, plan cancelled before the billing date"


def build_swarm(model: Model, *, billing_instructions: str = BILLING_INSTRUCTIONS) -> Swarm:
    """The swarm under test: triage hands refunds to billing with a typed payload."""
    billing = Agent(
        name="billing", instructions=billing_instructions, tools=[lookup_invoice], handoffs=[]
    )
    triage = Agent(
        name="triage",
        instructions="Send refund requests to billing.",
        handoffs=[Handoff(agent=billing, input_type=RefundRequest)],
    )
    return Swarm([triage, billing], "triage", model=model)


def offline_model() -> ScriptedModel:
    """The scripted model plays the LLM's part offline: the turns a real model would take."""
    return ScriptedModel(
        transfer("billing", invoice_id="INV-7", reason="billed for a cancelled plan"),
        tool_call("lookup_invoice", invoice_id="INV-7"),
        text("Refunded 30.00 EUR for INV-7; it reaches your card in 3-5 days."),
    )


def pick_model() -> Model:
    """The real API when OPENAI_API_KEY is set, else the scripted stand-in."""
    if os.environ.get("OPENAI_API_KEY"):
        return OpenAIModel(os.environ.get("SWARMKIT_MODEL", "gpt-4o-mini"))
    return offline_model()


async def main(argv: Sequence[str] = (), fixture: Path = FIXTURE) -> RunResult:
    """Record the fixture if asked (or missing), then replay it with no model answers."""
    if "--record" in argv or not fixture.exists():
        fixture.parent.mkdir(parents=True, exist_ok=True)
        await record_fixture(build_swarm(pick_model()), PROMPT, fixture, session_id="support")
        print(f"recorded {fixture}")
    no_answers = ScriptedModel()  # any model call would fail: replay must not make one
    result = await replay_fixture(build_swarm(no_answers), fixture)
    print(f"replayed {fixture.name}: trail {' -> '.join(result.trail)}, stop {result.stop_reason}")
    for h in result.handoffs:
        print(f"  {h.source} -> {h.target} (decided by {h.decided_by}) payload {h.payload}")
    print(f"model calls during replay: {len(no_answers.requests)}\nanswer: {result.final_output}")
    return result


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
