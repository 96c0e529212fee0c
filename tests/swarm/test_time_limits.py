"""run_timeout and agent_timeout on the run's clock: a frozen clock, no waiting."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from swarmkit import Agent, ConfigurationError, Swarm, tool
from swarmkit.events import RunFinished, TextDelta
from swarmkit.journal import InMemoryJournal
from swarmkit.models import ModelDelta, ModelRequest, ModelResponse
from swarmkit.models import TextDelta as ModelTextDelta
from swarmkit.runtime import Runtime
from swarmkit.testing import (
    FixedRuntime,
    NeverCalledModel,
    ScriptedModel,
    text,
    tool_call,
    transfer,
)


class SlowModel:
    """A scripted model whose every answer takes ``seconds`` on the fixed clock."""

    def __init__(self, fixed: FixedRuntime, seconds: float, model: ScriptedModel) -> None:
        self.fixed, self.seconds, self.model = fixed, seconds, model

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """Answer from the script, the clock moved on."""
        self.fixed.now += self.seconds
        return await self.model.respond(request)


class HangingModel:
    """A model still thinking a minute after it was asked: the clock moves on, no answer comes
    (its call can only be cancelled)."""

    def __init__(self, fixed: FixedRuntime) -> None:
        self.fixed = fixed

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """Let a minute pass, then wait for an event nobody sets."""
        self.fixed.now += 60
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


@tool
def look() -> str:
    """Look around."""
    return "seen"


async def test_run_timeout_stops_before_the_call_that_would_start_too_late() -> None:
    """Two 6-second calls use up a 10-second run; the third is never made."""
    fixed = FixedRuntime()
    script = ScriptedModel(tool_call("look"), tool_call("look"))
    model = SlowModel(fixed, 6, script)
    swarm = Swarm([Agent(name="a", tools=[look])], "a", model=model, run_timeout=10)

    result = await swarm.with_seams(runtime=fixed.runtime()).run("x")

    assert result.stop_reason == "timeout"
    assert result.limit is not None
    assert (result.limit.limit, result.limit.allowed, result.limit.used) == ("run_timeout", 10, 12)
    assert result.turns == 2
    script.assert_exhausted()


async def test_agent_timeout_counts_one_agent_stay() -> None:
    """Each agent gets its own allowance: a's slow call is fine, b's second call is too late."""
    fixed = FixedRuntime()
    script = ScriptedModel(transfer("b"), tool_call("look"), text("never"))
    model = SlowModel(fixed, 4, script)
    agents = [Agent(name="a"), Agent(name="b", tools=[look])]
    swarm = Swarm(agents, "a", model=model, agent_timeout=5)

    result = await swarm.with_seams(runtime=fixed.runtime()).run("x")

    assert result.stop_reason == "timeout"
    assert result.limit is not None
    assert (result.limit.limit, result.limit.agent) == ("agent_timeout", "b")
    assert result.trail == ("a", "b")


async def test_a_model_call_in_flight_is_cancelled_at_the_deadline() -> None:
    """A call still running past a 30-second allowance is cancelled; nothing is raised."""
    fixed = FixedRuntime()
    journal = InMemoryJournal()
    model = HangingModel(fixed)
    swarm = Swarm([Agent(name="a")], "a", model=model, run_timeout=30, journal=journal)

    result = await swarm.with_seams(runtime=fixed.runtime()).run("x")

    assert result.stop_reason == "timeout"
    assert result.limit is not None
    assert (result.limit.limit, result.limit.allowed, result.limit.used) == ("run_timeout", 30, 60)
    assert fixed.sleeps == []  # the deadline was waited for, not slept through
    kinds = [r.kind for r in await journal.read(result.session_id)]
    assert "model_call" not in kinds
    assert kinds[-2:] == ["limit_reached", "run_finished"]


async def test_a_tool_call_in_flight_is_cancelled_at_the_deadline() -> None:
    """A hanging tool is cancelled too; the run ends as a timeout."""

    fixed = FixedRuntime()

    @tool
    async def hang() -> str:
        """Work for a minute, then never return."""
        fixed.now += 60
        await asyncio.Event().wait()
        return "unreachable"

    model = ScriptedModel(tool_call("hang"))
    swarm = Swarm([Agent(name="a", tools=[hang])], "a", model=model, agent_timeout=30)

    result = await swarm.with_seams(runtime=fixed.runtime()).run("x")

    assert result.stop_reason == "timeout"
    assert result.limit is not None
    assert (result.limit.limit, result.limit.used) == ("agent_timeout", 60)


async def test_a_call_that_only_waits_takes_no_time_on_the_fixed_clock() -> None:
    """A tool awaiting a thread (as a mocked HTTP client does) finishes: the clock never moved."""

    @tool
    async def ask() -> str:
        """Wait for an answer from a worker thread."""
        return await asyncio.to_thread(str, "answered")

    fixed = FixedRuntime()
    model = ScriptedModel(tool_call("ask"), text("done"))
    swarm = Swarm([Agent(name="a", tools=[ask])], "a", model=model, agent_timeout=30)

    result = await swarm.with_seams(runtime=fixed.runtime()).run("x")

    assert (result.stop_reason, result.final_output) == ("final_output", "done")
    model.assert_exhausted()


async def test_a_runtime_without_sleep_until_sleeps_out_the_deadline() -> None:
    """A runtime whose clock moves by itself (the real one) waits the allowance with sleep."""
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    runtime = Runtime(clock=lambda: 1_000.0, sleep=sleep)
    swarm = Swarm([Agent(name="a")], "a", model=HangingModel(FixedRuntime()), run_timeout=30)

    result = await swarm.with_seams(runtime=runtime).run("x")

    assert result.stop_reason == "timeout"
    assert slept == [30.0]


async def test_a_run_cancelled_during_a_timed_call_is_not_a_timeout() -> None:
    """Cancelling the run's task while a timed call waits cancels the run; no timeout is made up."""
    fixed = FixedRuntime()
    called = asyncio.Event()

    class Waiting:
        async def respond(self, request: ModelRequest) -> ModelResponse:
            called.set()
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

    journal = InMemoryJournal()
    swarm = Swarm([Agent(name="a")], "a", model=Waiting(), run_timeout=30, journal=journal)
    run = asyncio.create_task(swarm.with_seams(runtime=fixed.runtime()).run("x", session_id="s"))
    await called.wait()

    run.cancel()

    with pytest.raises(asyncio.CancelledError):
        await run
    finished = (await journal.read("s"))[-1]
    assert (finished.data["stop_reason"], finished.data["cancelled"]) == ("interrupted", True)


async def test_a_timed_out_run_resumes_with_a_fresh_allowance() -> None:
    """Resume replays what finished, then goes on live with the whole allowance again."""
    fixed = FixedRuntime()
    journal = InMemoryJournal()
    script = ScriptedModel(tool_call("look"), tool_call("look"), text("done"))
    model = SlowModel(fixed, 6, script)
    swarm = Swarm([Agent(name="a", tools=[look])], "a", model=model, run_timeout=10)
    first = await swarm.with_seams(runtime=fixed.runtime()).run("x", journal=journal)
    assert first.stop_reason == "timeout"

    resumed = await swarm.with_seams(runtime=fixed.runtime()).resume(first.session_id, journal)

    assert resumed.stop_reason == "final_output"
    assert resumed.final_output == "done"
    assert resumed.turns == 3
    script.assert_exhausted()


async def test_a_replayed_timeout_stops_at_the_same_place() -> None:
    """Replay takes the timeout from the journal (a replay takes no time) and stops there."""
    fixed = FixedRuntime()
    journal = InMemoryJournal()
    model = SlowModel(fixed, 6, ScriptedModel(tool_call("look"), tool_call("look")))
    agents = [Agent(name="a", tools=[look])]
    recording = Swarm(agents, "a", model=model, run_timeout=10, runtime=fixed.runtime())
    recorded = await recording.run("x", journal=journal)
    replaying = Swarm(agents, "a", model=NeverCalledModel(), run_timeout=10)

    replayed = await replaying.replay(recorded.session_id, journal)

    assert replayed.stop_reason == "timeout"
    assert replayed.limit == recorded.limit
    assert replayed.turns == recorded.turns


@pytest.mark.parametrize("value", [0, -1, "5", True])
def test_a_timeout_must_be_a_positive_number_of_seconds(value: object) -> None:
    """run_timeout=0 (or a string) is a configuration error at construction."""
    with pytest.raises(ConfigurationError, match="run_timeout"):
        Swarm([Agent(name="a")], "a", model=NeverCalledModel(), run_timeout=value)  # type: ignore[arg-type]


async def test_a_streamed_run_under_a_time_limit_streams_as_usual() -> None:
    """With time to spare, text deltas arrive and the run finishes normally."""
    model = ScriptedModel(text("all good here"))
    swarm = Swarm([Agent(name="a")], "a", model=model, run_timeout=60)

    events = [e async for e in swarm.with_seams(runtime=FixedRuntime().runtime()).stream("x")]

    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert "".join(d.text for d in deltas) == "all good here"
    assert isinstance(events[-1], RunFinished)
    assert events[-1].result.stop_reason == "final_output"


async def test_a_stream_that_stalls_is_cancelled_at_the_deadline() -> None:
    """A streaming model that stops sending mid-answer is cancelled; the run ends as a timeout."""

    fixed = FixedRuntime()

    class Stalling(HangingModel):
        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta | ModelResponse]:
            yield ModelTextDelta(text="Let me ")
            fixed.now += 60
            await asyncio.Event().wait()

    swarm = Swarm([Agent(name="a")], "a", model=Stalling(fixed), agent_timeout=30)

    events = [e async for e in swarm.with_seams(runtime=fixed.runtime()).stream("x")]

    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Let me "]
    assert isinstance(events[-1], RunFinished)
    assert events[-1].result.stop_reason == "timeout"


async def test_a_limit_inside_a_resumed_run_stops_it_and_replay_follows_both_parts() -> None:
    """Resumed with a fresh allowance, the run times out again; replay passes the first stop
    (a resume went on from it) and stops at the second, with zero model calls."""
    fixed = FixedRuntime()
    journal = InMemoryJournal()
    turns = [tool_call("look") for _ in range(4)]
    model = SlowModel(fixed, 6, ScriptedModel(*turns))
    agents = [Agent(name="a", tools=[look])]
    swarm = Swarm(agents, "a", model=model, run_timeout=10)
    first = await swarm.with_seams(runtime=fixed.runtime()).run("x", journal=journal)

    resumed = await swarm.with_seams(runtime=fixed.runtime()).resume(first.session_id, journal)
    replayed = await Swarm(agents, "a", model=NeverCalledModel(), run_timeout=10).replay(
        first.session_id, journal
    )

    assert (first.turns, resumed.turns, replayed.turns) == (2, 4, 4)
    assert resumed.stop_reason == replayed.stop_reason == "timeout"
    assert replayed.limit == resumed.limit
