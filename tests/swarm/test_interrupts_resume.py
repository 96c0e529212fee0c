"""Runs pause for a human and resume from the journal; crashed runs resume without repeats."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import aclosing

import pytest
from pydantic import BaseModel

from swarmkit import (
    Agent,
    Handoff,
    HandoffPayloadError,
    JournalError,
    ModelError,
    Swarm,
    ToolArgumentsError,
    approve,
    edit,
    reject,
    tool,
)
from swarmkit.journal import InMemoryJournal
from swarmkit.messages import ToolMessage
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.testing import ScriptedModel, text, tool_call, transfer


class Refund(BaseModel):
    """A refund."""

    amount: int


def _swarm(model: ScriptedModel, **options: object) -> Swarm:
    billing = Agent(name="billing")
    triage = Agent(name="triage", handoffs=[Handoff(agent=billing, input_type=Refund)])
    return Swarm([triage, billing], "triage", model=model, **options)  # type: ignore[arg-type]


async def _pause_on_handoff(journal: InMemoryJournal, *, amount: int) -> None:
    """Session "s": triage asks to hand a refund of ``amount`` to billing and pauses there."""
    model = ScriptedModel(transfer("billing", amount=amount))
    await _swarm(model, interrupt_on_handoff=True, journal=journal).run("refund", session_id="s")


async def test_interrupt_before_an_agent_pauses_with_the_pending_handoff() -> None:
    """interrupt_before pauses before entering the agent and says what is pending."""
    journal = InMemoryJournal()
    model = ScriptedModel(transfer("billing", amount=50))
    swarm = _swarm(model, interrupt_before=["billing"], journal=journal)

    result = await swarm.run("refund", session_id="s")

    assert result.stop_reason == "interrupted"
    assert result.pending is not None
    assert (result.pending.kind, result.pending.target) == ("handoff", "billing")
    assert result.pending.payload == {"amount": 50}
    assert result.trail == ("triage",)


async def test_approved_interrupt_resumes_without_repeating_model_calls() -> None:
    """resume(approve()) performs the handoff and goes on live; earlier calls are not repeated."""
    journal = InMemoryJournal()
    first = ScriptedModel(transfer("billing", amount=50))
    await _swarm(first, interrupt_before=["billing"], journal=journal).run("refund", session_id="s")
    second = ScriptedModel(text("Refunded 50."))

    result = await _swarm(second, interrupt_before=["billing"], journal=journal).resume(
        "s", decision=approve()
    )

    assert result.final_output == "Refunded 50."
    assert result.trail == ("triage", "billing")
    assert [r.agent for r in second.requests] == ["billing"]
    second.assert_exhausted()


async def test_rejected_handoff_tells_the_agent_and_it_answers() -> None:
    """resume(reject(reason)) refuses the handoff; the agent reads why and answers itself."""
    journal = InMemoryJournal()
    await _pause_on_handoff(journal, amount=5000)
    second = ScriptedModel(text("I cannot refund that much."))

    result = await _swarm(second, interrupt_on_handoff=True, journal=journal).resume(
        "s", decision=reject("over the limit")
    )

    told = second.requests[0].messages[-1]
    assert isinstance(told, ToolMessage) and "over the limit" in told.content
    assert result.trail == ("triage",)
    assert result.final_output == "I cannot refund that much."


async def test_edited_payload_reaches_the_target() -> None:
    """resume(edit(payload=...)) hands off with the human's payload, validated."""
    journal = InMemoryJournal()
    await _pause_on_handoff(journal, amount=5000)

    result = await _swarm(
        ScriptedModel(text("Refunded 100.")), interrupt_on_handoff=True, journal=journal
    ).resume("s", decision=edit(payload={"amount": 100}))

    assert result.handoffs[0].payload == {"amount": 100}


def _approval_swarm(refunds: list[int]) -> Callable[[ScriptedModel, InMemoryJournal], Swarm]:
    """Billing with a refund tool that needs approval; each refund is appended to ``refunds``."""

    @tool(needs_approval=True)
    def refund(amount: int) -> str:
        """Refund money."""
        refunds.append(amount)
        return "refunded"

    def swarm(model: ScriptedModel, journal: InMemoryJournal) -> Swarm:
        agents = [Agent(name="billing", tools=[refund])]
        return Swarm(agents, "billing", model=model, journal=journal)

    return swarm


async def test_tool_needing_approval_pauses_before_it_runs() -> None:
    """A needs_approval tool pauses the run; approval runs it exactly once."""
    refunds: list[int] = []
    swarm = _approval_swarm(refunds)

    journal = InMemoryJournal()
    paused = await swarm(ScriptedModel(tool_call("refund", amount=20)), journal).run(
        "x", session_id="s"
    )
    assert paused.stop_reason == "interrupted" and refunds == []
    assert paused.pending is not None and paused.pending.tool_name == "refund"

    done = await swarm(ScriptedModel(text("Done.")), journal).resume("s", decision=approve())

    assert refunds == [20]
    assert done.final_output == "Done."


def _chain(model: ScriptedModel, journal: InMemoryJournal) -> Swarm:
    """a -> b -> c, pausing before every handoff."""
    agents = [Agent(name="a", handoffs=["b"]), Agent(name="b", handoffs=["c"]), Agent(name="c")]
    return Swarm(agents, "a", model=model, interrupt_on_handoff=True, journal=journal)


async def test_resuming_a_paused_run_twice_replays_the_first_decision() -> None:
    """A session with a recorded decision replays it, then pauses again at the next point."""
    journal = InMemoryJournal()
    await _chain(ScriptedModel(transfer("b")), journal).run("x", session_id="s")

    second = await _chain(ScriptedModel(transfer("c")), journal).resume("s", decision=approve())
    assert second.stop_reason == "interrupted" and second.trail == ("a", "b")

    final = await _chain(ScriptedModel(text("c answers")), journal).resume("s", decision=approve())

    assert final.trail == ("a", "b", "c")
    assert final.final_output == "c answers"


async def test_resume_of_an_interrupted_run_needs_a_decision() -> None:
    """Resuming a paused run without a decision says what to pass."""
    journal = InMemoryJournal()
    await _pause_on_handoff(journal, amount=1)

    with pytest.raises(JournalError, match="decision"):
        await _swarm(ScriptedModel(), journal=journal).resume("s")


async def test_resume_of_a_finished_run_is_refused() -> None:
    """A finished session is replayed, not resumed."""
    journal = InMemoryJournal()
    await _swarm(ScriptedModel(text("done")), journal=journal).run("x", session_id="s")

    with pytest.raises(JournalError, match="already finished"):
        await _swarm(ScriptedModel(), journal=journal).resume("s")


class _DownThenUp:
    """A model API that is down for the first call of billing, then answers."""

    def __init__(self, script: ScriptedModel, *, fail_for: str) -> None:
        self.script = script
        self.fail_for = fail_for

    async def respond(self, request: ModelRequest) -> ModelResponse:
        if request.agent == self.fail_for:
            raise ModelError("API down after 5 attempts", model="m", attempts=5)
        return await self.script.respond(request)


async def test_run_that_failed_on_the_api_resumes_and_retries_only_that_call() -> None:
    """A run ended by a ModelError resumes: earlier calls replay, the failed one is retried."""
    journal = InMemoryJournal()
    first = ScriptedModel(transfer("billing", amount=5))
    failed = await _swarm(_DownThenUp(first, fail_for="billing"), journal=journal).run(  # type: ignore[arg-type]
        "x", session_id="s"
    )
    assert failed.stop_reason == "error"

    retry = ScriptedModel(text("billing answers"))
    result = await _swarm(retry, journal=journal).resume("s")

    assert result.final_output == "billing answers"
    assert [r.agent for r in retry.requests] == ["billing"]
    first.assert_exhausted()


async def test_replay_of_a_failed_run_fails_the_same_way() -> None:
    """Strict replay reproduces the API failure from the journal, without calling anything."""
    journal = InMemoryJournal()
    await _swarm(
        _DownThenUp(ScriptedModel(transfer("billing", amount=5)), fail_for="billing"),  # type: ignore[arg-type]
        journal=journal,
    ).run("x", session_id="s")

    replayed = await _swarm(ScriptedModel(), journal=journal).replay("s")

    assert replayed.stop_reason == "error"
    assert "API down" in str(replayed.error)


async def test_interrupt_before_the_entry_agent_pauses_before_any_model_call() -> None:
    """interrupt_before naming the entry agent pauses the run before its first step."""
    journal = InMemoryJournal()
    first = ScriptedModel()
    paused = await _swarm(first, interrupt_before=["triage"], journal=journal).run(
        "x", session_id="s"
    )
    assert paused.stop_reason == "interrupted" and first.requests == []
    assert paused.pending is not None and paused.pending.kind == "agent"

    second = ScriptedModel(text("hello"))
    resumed = await _swarm(second, interrupt_before=["triage"], journal=journal).resume(
        "s", decision=approve()
    )

    assert resumed.final_output == "hello" and len(second.requests) == 1


async def test_rejected_tool_call_is_never_run_and_the_model_is_told_why() -> None:
    """reject(reason) on a needs_approval tool returns the reason to the model instead."""
    refunds: list[int] = []
    swarm = _approval_swarm(refunds)

    journal = InMemoryJournal()
    await swarm(ScriptedModel(tool_call("refund", amount=900)), journal).run("x", session_id="s")
    model = ScriptedModel(text("I cannot refund that."))

    done = await swarm(model, journal).resume("s", decision=reject("too much"))

    told = model.requests[0].messages[-1]
    assert isinstance(told, ToolMessage) and told.is_error and "too much" in told.content
    assert refunds == [] and done.final_output == "I cannot refund that."


async def test_stream_left_early_journals_its_steps_and_resumes() -> None:
    """Closing a stream mid-run writes the journaled steps at once; resume continues from them."""
    journal = InMemoryJournal()
    swarm = _swarm(ScriptedModel(transfer("billing", amount=3)), journal=journal)
    async with aclosing(swarm.stream("x", session_id="s")) as events:
        async for event in events:
            if event.kind == "handoff":
                break

    kinds = [record.kind for record in await journal.read("s")]
    assert kinds[-2:] == ["handoff", "agent_started"] and "run_finished" not in kinds

    result = await _swarm(ScriptedModel(text("billing answers")), journal=journal).resume("s")

    assert result.trail == ("triage", "billing") and result.final_output == "billing answers"


async def test_approving_a_call_whose_secret_arguments_the_journal_withheld_is_refused() -> None:
    """The journal keeps a secret argument as "[redacted]": approve alone would run the tool
    with the placeholder, so it is refused, naming the fields, and the session keeps waiting;
    an edit giving the values runs the tool with them."""
    seen: list[str] = []

    @tool(needs_approval=True)
    def connect(host: str, api_key: str) -> str:
        """Connect to a host."""
        seen.append(api_key)
        return "connected"

    journal = InMemoryJournal()
    model = ScriptedModel(tool_call("connect", host="db", api_key="KEY-7"), text("Done."))
    swarm = Swarm([Agent(name="ops", tools=[connect])], "ops", model=model, journal=journal)
    paused = await swarm.run("connect", session_id="s")
    assert paused.pending is not None and dict(paused.pending.payload or {})["api_key"] == "KEY-7"

    with pytest.raises(ToolArgumentsError, match=r"keeps api_key as '\[redacted\]'.*edit\("):
        await swarm.resume("s", decision=approve())
    assert seen == []
    done = await swarm.resume("s", decision=edit(payload={"host": "db", "api_key": "KEY-7"}))
    assert (done.final_output, seen) == ("Done.", ["KEY-7"])


async def test_approving_a_handoff_whose_secret_payload_the_journal_withheld_is_refused() -> None:
    """The same for a paused handoff: its payload would reach the agent as "[redacted]"."""

    class Access(BaseModel):
        """Access to grant."""

        user: str
        access_token: str

    ops = Agent(name="ops")
    desk = Agent(name="desk", handoffs=[Handoff(agent=ops, input_type=Access)])
    journal = InMemoryJournal()
    model = ScriptedModel(transfer("ops", user="ann", access_token="T-1"), text("Granted."))
    swarm = Swarm([desk, ops], "desk", model=model, journal=journal, interrupt_on_handoff=True)
    await swarm.run("grant", session_id="s")
    with pytest.raises(HandoffPayloadError, match=r"keeps access_token as '\[redacted\]'"):
        await swarm.resume("s", decision=approve())
    payload = {"user": "ann", "access_token": "T-1"}
    done = await swarm.resume("s", decision=edit(payload=payload))
    assert done.final_output == "Granted."
    assert "T-1" in str(model.requests[-1].messages)  # what ops was handed
