"""Each run streams its events exactly once, in order, ending with the result."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from swarmkit import Agent, ConfigurationError, HandoffGraph, Swarm, ToolResult, tool
from swarmkit.events import Event, RunFinished
from swarmkit.journal import InMemoryJournal
from swarmkit.testing import ScriptedModel, text, tool_call, transfer


async def _kinds(swarm: Swarm, prompt: str, **kwargs: object) -> list[Event]:
    return [event async for event in swarm.stream(prompt, **kwargs)]  # type: ignore[arg-type]


async def test_llm_handoff_run_streams_the_exact_event_sequence() -> None:
    """Tool call, handoff and answer appear in order, each once."""

    @tool
    def lookup() -> str:
        """Look up."""
        return "found"

    model = ScriptedModel(tool_call("lookup"), transfer("b"), text("two words"))
    swarm = Swarm([Agent(name="a", tools=[lookup]), Agent(name="b")], "a", model=model)

    events = await _kinds(swarm, "x")

    assert [e.kind for e in events] == [
        "run_started",
        "agent_started",
        "model_call_started",
        "model_call_finished",
        "tool_called",
        "tool_resulted",
        "model_call_started",
        "model_call_finished",
        "handoff",
        "agent_started",
        "model_call_started",
        "text_delta",
        "text_delta",
        "model_call_finished",
        "run_finished",
    ]
    deltas = [e.text for e in events if e.kind == "text_delta"]
    assert "".join(deltas) == "two words"
    final = events[-1]
    assert isinstance(final, RunFinished) and final.result.final_output == "two words"


async def test_rule_handoff_streams_rule_evaluated_then_handoff() -> None:
    """A rule decision is an event of its own, followed by the handoff it caused."""
    graph = HandoffGraph()
    graph.add_edge("a", "b", when="go == true")
    model = ScriptedModel(text("b"))
    swarm = Swarm([Agent(name="a"), Agent(name="b")], "a", model=model, graph=graph)

    events = await _kinds(swarm, "x", context={"go": True})

    assert [e.kind for e in events][:5] == [
        "run_started",
        "agent_started",
        "rule_evaluated",
        "handoff",
        "agent_started",
    ]
    handoff = events[3]
    assert handoff.kind == "handoff" and handoff.decided_by == "rule"


async def test_sub_session_ids_follow_the_seed_002_pattern() -> None:
    """Each agent's turn has id {session}__swarm_{agent}_{handoff_count}."""
    model = ScriptedModel(transfer("b"), text("done"))
    swarm = Swarm([Agent(name="a"), Agent(name="b")], "a", model=model)

    events = await _kinds(swarm, "x", session_id="s1")

    started = [e.sub_session_id for e in events if e.kind == "agent_started"]
    assert started == ["s1__swarm_a_0", "s1__swarm_b_1"]


async def test_refused_handoff_is_an_event_with_its_reason() -> None:
    """A cycle refusal streams a handoff_refused event saying why."""
    model = ScriptedModel(transfer("b"), transfer("a"), text("b answers"))
    swarm = Swarm([Agent(name="a"), Agent(name="b")], "a", model=model)

    events = await _kinds(swarm, "x")

    refused = [e for e in events if e.kind == "handoff_refused"]
    assert len(refused) == 1
    assert refused[0].reason == "cycle" and refused[0].target == "a"


async def test_tool_that_hands_off_streams_its_result_before_the_handoff() -> None:
    """A tool's goto: its call and result stream first, then the handoff, then the new agent."""

    @tool
    def escalate() -> ToolResult:
        """Escalate."""
        return ToolResult(output="escalating", goto="b")

    model = ScriptedModel(tool_call("escalate"), text("done"))
    swarm = Swarm([Agent(name="a", tools=[escalate]), Agent(name="b")], "a", model=model)

    events = await _kinds(swarm, "x")

    assert [e.kind for e in events] == [
        "run_started",
        "agent_started",
        "model_call_started",
        "model_call_finished",
        "tool_called",
        "tool_resulted",
        "handoff",
        "agent_started",
        "model_call_started",
        "text_delta",
        "model_call_finished",
        "run_finished",
    ]
    final = events[-1]
    assert isinstance(final, RunFinished) and final.result.trail == ("a", "b")


async def test_an_observer_of_run_sees_every_event_and_the_journal_is_the_same_without() -> None:
    """run() with an observer hands it the per-step events too; a run nobody observes skips
    building them, and journals and returns exactly what the observed run does."""

    @tool
    def lookup() -> str:
        """Look up."""
        return "found"

    def swarm(observers: list[Any]) -> Swarm:
        model = ScriptedModel(tool_call("lookup"), text("done"))
        return Swarm([Agent(name="a", tools=[lookup])], "a", model=model, observers=observers)

    seen: list[str] = []

    async def watch(events: AsyncIterator[Event]) -> AsyncIterator[Event]:
        async for event in events:
            seen.append(event.kind)
            yield event

    watched, quiet = InMemoryJournal(), InMemoryJournal()
    observed = await swarm([watch]).run("x", session_id="s", journal=watched)
    unobserved = await swarm([]).run("x", session_id="s", journal=quiet)

    assert seen == [
        "run_started",
        "agent_started",
        "model_call_started",
        "model_call_finished",
        "tool_called",
        "tool_resulted",
        "model_call_started",
        "model_call_finished",
        "run_finished",
    ]
    assert unobserved.final_output == observed.final_output == "done"
    assert [(r.kind, r.data) for r in await quiet.read("s")] == [
        (r.kind, r.data) for r in await watched.read("s")
    ]


def test_with_observers_refuses_a_list_passed_whole() -> None:
    """``with_observers`` takes observers one by one; a list passed whole fails at once with
    how to pass it, not with a TypeError in the middle of the first run."""
    swarm = Swarm([Agent(name="a")], "a", model=ScriptedModel(text("hi")))

    def observer(events: Any) -> Any:
        return events

    with pytest.raises(ConfigurationError, match=r"one by one, with_observers\(\*observers\)"):
        swarm.with_observers([observer])  # type: ignore[arg-type]
    assert swarm.with_observers(observer).run_sync("go").final_output == "hi"
