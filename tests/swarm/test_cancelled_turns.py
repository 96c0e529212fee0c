"""A conversation whose latest turn was cancelled (or cut short) goes on from what it completed."""

from __future__ import annotations

import asyncio

import pytest

from swarmkit import Agent, InMemoryJournal, Swarm, tool
from swarmkit.messages import ToolMessage, UserMessage
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.testing import ScriptedModel, text, tool_call, transfer, turn


@tool
def refund(invoice: str) -> str:
    """Refund an invoice."""
    return f"refunded {invoice}"


AGENTS = [
    Agent(name="triage", handoffs=["billing"]),
    Agent(name="billing", handoffs=[], tools=[refund]),
]


class _HangsAt:
    """Answers from a script until the call numbered ``hang_at``, which never returns."""

    name = "hangs"

    def __init__(self, script: ScriptedModel, hang_at: int) -> None:
        self.script, self.hang_at, self.calls = script, hang_at, 0
        self.hanging = asyncio.Event()

    async def respond(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if self.calls == self.hang_at:
            self.hanging.set()
            await asyncio.Event().wait()
        return await self.script.respond(request)


async def _cancel(swarm: Swarm, model: _HangsAt, prompt: str, journal: InMemoryJournal) -> None:
    run = asyncio.create_task(
        swarm.run(prompt, session_id="chat", journal=journal, continue_session=True)
    )
    await model.hanging.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run


async def test_the_turn_after_a_cancelled_one_continues_from_what_it_completed() -> None:
    """Cancelled while billing's model was thinking: the next message goes to billing, which
    sees the first message and the handoff that did happen."""
    journal = InMemoryJournal()
    hanging = _HangsAt(ScriptedModel(transfer("billing")), hang_at=2)
    await _cancel(Swarm(AGENTS, "triage", model=hanging), hanging, "Refund INV-1", journal)
    model = ScriptedModel(text("Refunded INV-1."))

    second = await Swarm(AGENTS, "triage", model=model).run(
        "Are you there?", session_id="chat", journal=journal, continue_session=True
    )

    assert (second.session_id, second.trail, second.final_output) == (
        "chat__turn_2",
        ("billing",),
        "Refunded INV-1.",
    )
    sent = model.requests[0].messages[1:]
    assert (sent[0], sent[-1]) == (
        UserMessage(content="Refund INV-1"),
        UserMessage(content="Are you there?"),
    )
    replayed = await Swarm(AGENTS, "triage", model=ScriptedModel()).replay("chat__turn_2", journal)
    assert replayed.final_output == "Refunded INV-1."


async def test_a_call_the_cancelled_turn_never_finished_is_closed_for_the_model() -> None:
    """Cancelled between two tool calls of one answer: the next turn's request answers every
    call (the one that ran with its result, the other as not run), as providers require."""
    journal = InMemoryJournal()

    hanging = asyncio.Event()

    @tool
    async def notify(invoice: str) -> str:
        """Tell the customer (never finishes)."""
        hanging.set()
        await asyncio.Event().wait()
        return "unreachable"

    agents = [Agent(name="billing", handoffs=[], tools=[refund, notify])]
    script = ScriptedModel(
        turn(tool_call("refund", invoice="INV-2"), tool_call("notify", invoice="INV-2"))
    )
    run = asyncio.create_task(
        Swarm(agents, "billing", model=script).run(
            "Refund INV-2", session_id="chat", journal=journal, continue_session=True
        )
    )
    await hanging.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    model = ScriptedModel(text("Done."))

    await Swarm(agents, "billing", model=model).run(
        "And?", session_id="chat", journal=journal, continue_session=True
    )

    results = [m for m in model.requests[0].messages if isinstance(m, ToolMessage)]
    assert [(m.name, m.is_error) for m in results] == [("refund", False), ("notify", True)]
    assert results[0].content == "refunded INV-2"
    assert "cancelled" in results[1].content
