"""A session stopped more than once (a limit, a model error) still resumes from where it got to."""

from __future__ import annotations

from swarmkit import Agent, InMemoryJournal, ModelError, Swarm, UsageLimits, tool
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.testing import ScriptedModel, text, tool_call


@tool
def look() -> str:
    """Look around."""
    return "seen"


AGENTS = [Agent(name="a", tools=[look])]


async def test_a_session_a_limit_stopped_twice_resumes_with_a_larger_one() -> None:
    """Stopped at two calls, resumed under the same limit (stopped again with no call), then
    resumed with four: the third and fourth calls are made and the run answers."""
    journal = InMemoryJournal()
    first = ScriptedModel(tool_call("look"), tool_call("look"))
    two = UsageLimits(max_model_calls=2)
    stopped = await Swarm(AGENTS, "a", model=first).run(
        "x", session_id="s", journal=journal, limits=two
    )
    again = await Swarm(AGENTS, "a", model=ScriptedModel()).resume("s", journal, limits=two)
    model = ScriptedModel(tool_call("look"), text("done"))

    resumed = await Swarm(AGENTS, "a", model=model).resume(
        "s", journal, limits=UsageLimits(max_model_calls=4)
    )

    assert (stopped.stop_reason, again.stop_reason) == ("usage_limit", "usage_limit")
    assert (resumed.stop_reason, resumed.final_output) == ("final_output", "done")
    model.assert_exhausted()
    replayed = await Swarm(AGENTS, "a", model=ScriptedModel()).replay("s", journal)
    assert replayed.final_output == "done"


class _Down:
    """A model that is down: every call fails for good."""

    name = "down"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        raise ModelError("down", model="down", attempts=1)


async def test_a_session_that_failed_twice_resumes_once_the_model_is_back() -> None:
    """Two failed attempts at the same call; the third resume makes it and the run answers,
    and the whole session then replays as one run."""
    journal = InMemoryJournal()
    await Swarm(AGENTS, "a", model=_Down()).run("q", session_id="e", journal=journal)
    failed_again = await Swarm(AGENTS, "a", model=_Down()).resume("e", journal)
    swarm = Swarm(AGENTS, "a", model=ScriptedModel(text("back")))

    resumed = await swarm.resume("e", journal)

    assert failed_again.stop_reason == "error"
    assert (resumed.stop_reason, resumed.final_output) == ("final_output", "back")
    replayed = await swarm.with_model(ScriptedModel()).replay("e", journal)
    assert replayed.final_output == "back"


async def test_a_session_that_failed_after_resuming_past_an_earlier_failure_resumes() -> None:
    """Failed at the first call, resumed past it, failed at the next: resuming again replays
    the first failure's recovery and makes only the call that failed last."""
    journal = InMemoryJournal()
    await Swarm(AGENTS, "a", model=_Down()).run("q", session_id="m", journal=journal)

    class _OnceThenDown:
        name = "once"

        def __init__(self) -> None:
            self.calls = 0

        async def respond(self, request: ModelRequest) -> ModelResponse:
            self.calls += 1
            if self.calls == 1:
                return await ScriptedModel(tool_call("look")).respond(request)
            raise ModelError("down", model="down", attempts=1)

    await Swarm(AGENTS, "a", model=_OnceThenDown()).resume("m", journal)
    model = ScriptedModel(text("back"))

    resumed = await Swarm(AGENTS, "a", model=model).resume("m", journal)

    assert (resumed.stop_reason, resumed.final_output) == ("final_output", "back")
    model.assert_exhausted()
