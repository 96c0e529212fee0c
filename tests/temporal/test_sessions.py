"""Sessions on a real Temporal dev server give the results the same swarm gives in process."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError

from swarmkit import Agent, RunContext, RunError, Swarm
from swarmkit.events import RunFinished, TextDelta
from swarmkit.exceptions import ConfigurationError
from swarmkit.journal import InMemoryJournal, SQLiteJournal
from swarmkit.messages import UserMessage
from swarmkit.models import ModelRequest, OpenAIModel, RetryPolicy
from swarmkit.temporal import (
    SwarmPlugin,
    follow,
    run_session,
    session_events,
    session_result,
    start_session,
)
from swarmkit.temporal._activities import SwarmActivities
from swarmkit.temporal._data import ToolCallInput
from swarmkit.temporal._workflow import ActivityModel
from swarmkit.testing import NeverCalledModel, ScriptedModel, text, tool_call
from tests.temporal.harness import activity_counts, running_worker
from tests.temporal.swarms import routed_swarm, support_script, support_swarm


def _scripted() -> ScriptedModel:
    return ScriptedModel(*support_script(), name="scripted")


async def test_two_agent_session_matches_the_in_process_run(temporal_address: str) -> None:
    """A rule that does not fire, a tool, a pure tool and a typed, filtered handoff: one result."""
    session_id = f"support-{uuid.uuid4().hex[:8]}"
    local = await support_swarm(_scripted()).run(
        "refund A-1", context={"vip": False}, session_id=session_id
    )
    model = _scripted()
    async with running_worker(
        temporal_address, swarms={"support": support_swarm()}, models={"scripted": model}
    ) as (client, queue):
        handle = await start_session(
            client,
            "support",
            "refund A-1",
            task_queue=queue,
            context={"vip": False},
            session_id=session_id,
        )
        result = await session_result(handle)
        history = await handle.fetch_history()

    assert result.to_data() == local.to_data()
    assert result.trail == ("triage", "billing")
    assert result.handoffs[0].payload == {"order_id": "A-1", "amount": 42.0}
    model.assert_exhausted()
    counts = activity_counts(history)
    assert counts["swarmkit.model"] == {"scheduled": 4, "completed": 4}
    assert counts["swarmkit.tool"] == {"scheduled": 1, "completed": 1}  # add() is pure


async def test_rule_routed_session_calls_no_model_for_the_router(temporal_address: str) -> None:
    """An unconditional rule hands off inside the workflow: one model activity, the answerer's."""
    model = ScriptedModel(text("answered", for_agent="answerer"), name="scripted")
    async with running_worker(
        temporal_address, swarms={"routed": routed_swarm()}, models={"scripted": model}
    ) as (client, queue):
        handle = await start_session(client, "routed", "hello", task_queue=queue)
        result = await session_result(handle)
        counts = activity_counts(await handle.fetch_history())

    assert result.trail == ("router", "answerer")
    assert result.handoffs[0].decided_by == "rule"
    assert [r.agent for r in model.requests] == ["answerer"]
    assert counts["swarmkit.model"]["scheduled"] == 1


async def test_events_query_returns_the_run_events_in_order(temporal_address: str) -> None:
    """The events query gives the events an in-process run streams (whole answers: the model
    activity returns complete responses, so no text deltas), RunFinished last."""
    local = [
        type(e).__name__
        async for e in support_swarm(_scripted()).stream("refund A-1", session_id="s")
        if not isinstance(e, TextDelta)
    ]
    async with running_worker(
        temporal_address, swarms={"support": support_swarm()}, models={"scripted": _scripted()}
    ) as (client, queue):
        handle = await start_session(client, "support", "refund A-1", task_queue=queue)
        followed = [event async for event in follow(handle, every=0.05)]
        events = await session_events(handle)
        later = await session_events(handle, since=3)

    assert [type(e).__name__ for e in events] == local
    assert isinstance(events[-1], RunFinished)
    assert later == events[3:]
    assert followed == events


@pytest.mark.parametrize(
    ("limits", "stop_reason"),
    [({"max_turns": 1}, "max_turns"), ({"max_handoffs": 0}, "max_handoffs")],
)
async def test_a_limit_ends_the_session_with_its_stop_reason(
    temporal_address: str, limits: dict[str, int], stop_reason: str
) -> None:
    """A limit reached inside the workflow is a result, not a workflow task failing forever."""
    swarm = Swarm(
        [Agent(name="a", tools=support_swarm().plans["triage"].agent.tools), Agent(name="b")],
        "a",
        model=ScriptedModel(name="scripted"),
        on_max_turns="stop",
        **limits,  # type: ignore[arg-type]
    )
    model = ScriptedModel(
        tool_call("add", a=1, b=2), tool_call("transfer_to_b"), text("b"), name="scripted"
    )
    async with running_worker(
        temporal_address, swarms={"limited": swarm}, models={"scripted": model}
    ) as (client, queue):
        result = await run_session(client, "limited", "go", task_queue=queue)

    assert result.stop_reason == stop_reason


async def test_an_error_policy_fails_the_session_once(temporal_address: str) -> None:
    """on_max_turns="error" fails the workflow for good, naming the limit: never retried."""
    swarm = Swarm(
        [Agent(name="a", tools=support_swarm().plans["triage"].agent.tools)],
        "a",
        model=ScriptedModel(name="scripted"),
        max_turns=1,
        on_max_turns="error",
    )
    model = ScriptedModel(tool_call("add", a=1, b=2), text("never"), name="scripted")
    async with running_worker(
        temporal_address, swarms={"strict": swarm}, models={"scripted": model}
    ) as (client, queue):
        with pytest.raises(WorkflowFailureError) as failure:
            await run_session(client, "strict", "go", task_queue=queue)

    assert "MaxTurnsExceeded" in str(failure.value.cause)


async def test_an_oversized_model_request_ends_the_run_naming_the_step(
    temporal_address: str,
) -> None:
    """A request over the payload limit ends the run with an error naming the agent's call."""
    async with running_worker(
        temporal_address,
        swarms={"support": support_swarm()},
        models={"scripted": _scripted()},
        max_payload_bytes=300,
    ) as (client, queue):
        result = await run_session(client, "support", "x" * 400, task_queue=queue)

    assert result.stop_reason == "error"
    assert result.failure is not None and result.failure.type == "ModelError"
    assert "the model call of agent 'triage'" in result.failure.message
    assert "payload limit" in result.failure.message


async def test_an_unknown_swarm_fails_the_session_naming_it(temporal_address: str) -> None:
    """A swarm name the workers do not know is a non-retryable failure that names it."""
    async with running_worker(temporal_address, swarms={}, models={}) as (client, queue):
        with pytest.raises(WorkflowFailureError) as failure:
            await run_session(client, "nope", "hi", task_queue=queue)

    assert "swarm 'nope' is not registered" in str(failure.value.cause)


async def test_an_unregistered_model_fails_the_session_naming_it(temporal_address: str) -> None:
    """A swarm whose model is not in the registry fails at once, naming the model."""
    async with running_worker(temporal_address, swarms={"support": support_swarm()}, models={}) as (
        client,
        queue,
    ):
        with pytest.raises(WorkflowFailureError) as failure:
            await run_session(client, "support", "hi", task_queue=queue)

    assert "uses model 'scripted', which is not registered" in str(failure.value.cause)


async def test_a_non_json_context_is_refused_before_the_session_starts(
    temporal_address: str,
) -> None:
    """A context Temporal cannot carry is a ConfigurationError on the client."""
    async with running_worker(temporal_address, swarms={}, models={}) as (client, queue):
        with pytest.raises(ConfigurationError, match="JSON"):
            await start_session(client, "support", "hi", task_queue=queue, context={"x": {1j}})


async def test_the_journal_mirror_holds_a_replayable_session(
    temporal_address: str, tmp_path: Path
) -> None:
    """The mirror writes the run's records; the in-process swarm replays them with no model."""
    journal = SQLiteJournal(tmp_path / "mirror.db")
    async with running_worker(
        temporal_address,
        swarms={"support": support_swarm()},
        models={"scripted": _scripted()},
        journal=journal,
    ) as (client, queue):
        handle = await start_session(client, "support", "refund A-1", task_queue=queue)
        result = await session_result(handle)

    records = await journal.read(handle.id)
    assert records[0].kind == "run_started"
    assert records[-1].kind == "run_finished"
    replayed = await support_swarm(NeverCalledModel()).replay(handle.id, journal)
    assert replayed.final_output == result.final_output


async def test_a_long_session_continues_as_new_and_keeps_its_id(temporal_address: str) -> None:
    """Two steps per workflow run: the session crosses runs and ends as in process."""
    session_id = f"long-{uuid.uuid4().hex[:8]}"
    local = await support_swarm(_scripted()).run("refund A-1", session_id=session_id)
    journal = InMemoryJournal()
    async with running_worker(
        temporal_address,
        swarms={"support": support_swarm()},
        models={"scripted": _scripted()},
        journal=journal,
        steps_per_run=2,
    ) as (client, queue):
        handle = await start_session(
            client, "support", "refund A-1", task_queue=queue, session_id=session_id
        )
        result = await session_result(handle)
        first = await client.get_workflow_handle(
            session_id, run_id=handle.first_execution_run_id
        ).fetch_history()

    assert result.to_data() == local.to_data()
    assert any(
        e.HasField("workflow_execution_continued_as_new_event_attributes") for e in first.events
    )
    records = await journal.read(session_id)
    assert [r.seq for r in records] == list(range(len(records)))


async def test_an_activity_stand_in_outside_a_workflow_is_a_clear_error() -> None:
    """A workflow's model stand-in called in plain code says where it runs."""
    request = ModelRequest(messages=(UserMessage(content="hi"),))
    with pytest.raises(ConfigurationError, match="only inside"):
        await ActivityModel("scripted").respond(request)


async def test_run_sync_inside_an_event_loop_is_a_clear_error() -> None:
    """run_sync from async code (or a workflow) raises instead of hanging."""
    swarm = Swarm([Agent(name="a")], "a", model=ScriptedModel(text("x")))
    with pytest.raises(RunError, match=r"await swarm\.run"):
        swarm.run_sync("hi")


def test_a_model_that_retries_on_its_own_is_refused() -> None:
    """Temporal's retry policy is the one retry layer: a model retrying on its own is refused."""
    with pytest.raises(ConfigurationError, match="one retry layer"):
        SwarmPlugin(models={"gpt-4o": OpenAIModel("gpt-4o", api_key="sk-test")})
    single = OpenAIModel("gpt-4o", api_key="sk-test", retry=RetryPolicy(max_attempts=1))
    assert SwarmPlugin(models={"gpt-4o": single}).name() == "swarmkit.SwarmPlugin"


async def test_a_tool_the_worker_does_not_have_fails_without_retrying() -> None:
    """A tool activity naming a tool this worker's swarm lacks is a non-retryable failure."""
    plugin = SwarmPlugin(swarms={"support": support_swarm()}, models={})
    call = ToolCallInput(swarm="support", agent="triage", tool="nope", arguments="{}", context={})
    with pytest.raises(ApplicationError) as failure:
        await SwarmActivities(plugin.registry).call_tool(call)

    assert failure.value.non_retryable
    assert "tool 'nope' of agent 'triage' is not registered" in failure.value.message


async def test_run_sync_inside_a_workflow_fails_the_session_naming_it(
    temporal_address: str,
) -> None:
    """An instruction function that calls run_sync in the workflow fails clearly, never hangs."""
    inner = Swarm([Agent(name="x")], "x", model=ScriptedModel(text("x")))

    def instructions(context: RunContext) -> str:
        return inner.run_sync("nested").final_output or ""

    swarm = Swarm(
        [Agent(name="a", instructions=instructions)], "a", model=ScriptedModel(name="scripted")
    )
    async with running_worker(
        temporal_address, swarms={"nested": swarm}, models={"scripted": ScriptedModel()}
    ) as (client, queue):
        with pytest.raises(WorkflowFailureError) as failure:
            await run_session(client, "nested", "hi", task_queue=queue)

    assert "run_sync() was called inside a running event loop" in str(failure.value.cause)
