"""A run stopped by Ctrl-C (a cancelled task) is journaled as interrupted and resumes as is."""

from __future__ import annotations

import asyncio

import pytest

from swarmkit import Agent, InMemoryJournal, ModelError, Swarm
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.testing import ScriptedModel, text, transfer

AGENTS = [Agent(name="a", instructions="Route."), Agent(name="b", instructions="Answer.")]


class _Hanging:
    """Answers agent a from a script; hangs on agent b's call, saying it got there."""

    name = "hanging"

    def __init__(self, script: ScriptedModel) -> None:
        self.script = script
        self.hanging = asyncio.Event()

    async def respond(self, request: ModelRequest) -> ModelResponse:
        if request.agent == "a":
            return await self.script.respond(request)
        self.hanging.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def _cancelled_session(journal: InMemoryJournal) -> None:
    model = _Hanging(ScriptedModel(transfer("b")))
    run = asyncio.create_task(
        Swarm(AGENTS, "a", model=model).run("q", session_id="s", journal=journal)
    )
    await model.hanging.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run


async def test_a_cancelled_run_is_journaled_as_interrupted_and_cancelled() -> None:
    """Not left open: the last record says interrupted and cancelled, with nothing pending."""
    journal = InMemoryJournal()

    await _cancelled_session(journal)

    last = (await journal.read("s"))[-1]
    assert last.kind == "run_finished"
    assert (last.data["stop_reason"], last.data["cancelled"], last.data["pending"]) == (
        "interrupted",
        True,
        None,
    )


async def test_resume_continues_a_cancelled_run_without_a_decision_and_replays_whole() -> None:
    """resume repeats no journaled model call; the whole session then replays as one run."""
    journal = InMemoryJournal()
    await _cancelled_session(journal)
    model = ScriptedModel(text("b answers"))
    swarm = Swarm(AGENTS, "a", model=model)

    resumed = await swarm.resume("s", journal)

    assert (resumed.stop_reason, resumed.trail, resumed.final_output) == (
        "final_output",
        ("a", "b"),
        "b answers",
    )
    assert [r.agent for r in model.requests] == ["b"]
    replayed = await swarm.with_model(ScriptedModel()).replay("s", journal)
    assert (replayed.final_output, replayed.trail) == ("b answers", ("a", "b"))


async def test_a_session_resumed_after_an_error_replays_whole() -> None:
    """The failed attempt's end and failed call are left out of the replay, as resume did."""

    class _Down:
        name = "down"

        async def respond(self, request: ModelRequest) -> ModelResponse:
            raise ModelError("down", model="down", attempts=1)

    journal = InMemoryJournal()
    await Swarm(AGENTS, "a", model=_Down()).run("q", session_id="e", journal=journal)
    swarm = Swarm(AGENTS, "a", model=ScriptedModel(transfer("b"), text("b answers")))
    await swarm.resume("e", journal)

    replayed = await swarm.with_model(ScriptedModel()).replay("e", journal)

    assert replayed.final_output == "b answers"
