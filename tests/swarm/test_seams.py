"""The durable-execution seams: runtime, tool runner, decision source, mirror, data results."""

from __future__ import annotations

import asyncio
import json
from contextlib import aclosing
from typing import Any

import pytest
from pydantic import BaseModel

from swarmkit import Agent, Handoff, RunContext, Swarm, approve, edit, tool
from swarmkit.context import context_from_data, context_to_data
from swarmkit.events import Event, event_from_data, event_to_data
from swarmkit.exceptions import (
    ConfigurationError,
    HandoffPayloadError,
    JournalError,
    ModelError,
    ToolArgumentsError,
    ToolExecutionError,
)
from swarmkit.interrupts import Decision, PendingDecision
from swarmkit.journal import InMemoryJournal, JournalRecord, export_jsonl
from swarmkit.models import ModelRequest, ModelResponse
from swarmkit.result import RunResult
from swarmkit.testing import FixedRuntime, ScriptedModel, text, tool_call, transfer
from swarmkit.tools import FunctionTool, ToolOutcome, outcome_from_data, outcome_to_data


class Refund(BaseModel):
    """A refund."""

    amount: int


class Database:
    """A connection-like object: not JSON, and holding a secret."""

    def __init__(self, name: str, password: str = "sk-live-123") -> None:
        self.name = name
        self.password = password


@tool
def lookup(order: str, ctx: RunContext) -> str:
    """Look an order up."""
    db: Database = ctx.deps["db"]
    assert db.password == "sk-live-123"
    return f"{order} via {db.name} key={ctx.idempotency_key}"


@tool
def explode(order: str) -> str:
    """Always fails."""
    raise RuntimeError(f"no order {order}")


def _swarm(model: ScriptedModel, **options: Any) -> Swarm:
    billing = Agent(name="billing", tools=[lookup])
    triage = Agent(name="triage", handoffs=[Handoff(agent=billing, input_type=Refund)])
    return Swarm([triage, billing], "triage", model=model, **options)


def _script() -> ScriptedModel:
    return ScriptedModel(
        transfer("billing", amount=5), tool_call("lookup", order="A-1"), text("Refunded.")
    )


async def test_a_fixed_runtime_makes_two_runs_write_identical_journals() -> None:
    """Ids come from the runtime: the same script gives the same journal, byte for byte."""
    exports = []
    for _ in range(2):
        journal = InMemoryJournal(clock=lambda: 0.0)
        runtime = FixedRuntime().runtime()
        result = await _swarm(_script(), journal=journal, runtime=runtime).run(
            "refund", deps={"db": Database("db-1")}
        )
        exports.append(export_jsonl(await journal.read(result.session_id)))
    assert result.session_id == "id-1"
    assert exports[0] == exports[1]


async def test_tools_run_through_the_tool_runner_with_deps_and_a_stable_key() -> None:
    """Every tool call goes through the runner; it sees deps and the idempotency key."""
    seen: list[tuple[str, str, str | None]] = []

    class Recording:
        async def invoke(self, tool: FunctionTool, arguments: str, context: RunContext) -> Any:
            seen.append((tool.name, arguments, context.idempotency_key))
            return await tool.invoke(arguments, context)

    result = await _swarm(_script(), tool_runner=Recording()).run(
        "refund", session_id="s", deps={"db": Database("primary")}
    )
    assert seen == [("lookup", '{"order": "A-1"}', "s:2:call_2")]
    assert result.final_output == "Refunded."
    tool_message = result.messages[-2]
    assert getattr(tool_message, "content", "") == "A-1 via primary key=s:2:call_2"


async def test_the_idempotency_key_is_the_same_on_resume_after_a_crash() -> None:
    """A tool call repeated by a resume gets the key it had the first time."""
    keys: list[str | None] = []

    class Crashing:
        async def invoke(self, tool: FunctionTool, arguments: str, context: RunContext) -> Any:
            keys.append(context.idempotency_key)
            if len(keys) == 1:
                raise KeyboardInterrupt  # the process dies inside the tool
            return await tool.invoke(arguments, context)

    journal = InMemoryJournal()
    swarm = _swarm(_script(), journal=journal, tool_runner=Crashing())
    with pytest.raises(KeyboardInterrupt):
        await swarm.run("refund", session_id="s", deps={"db": Database("x")})
    swarm = _swarm(ScriptedModel(text("Refunded.")), journal=journal, tool_runner=Crashing())
    result = await swarm.resume("s", deps={"db": Database("x")})
    assert result.final_output == "Refunded."
    assert keys == ["s:2:call_2", "s:2:call_2"]


async def test_a_decision_source_that_waits_lets_the_run_continue_in_place() -> None:
    """A source that returns a decision keeps the run going; replay takes the same path."""
    asked: list[PendingDecision] = []

    class Approver:
        async def decide(self, pending: PendingDecision) -> Decision | None:
            asked.append(pending)
            await asyncio.sleep(0)
            return approve()

    journal = InMemoryJournal()
    swarm = _swarm(_script(), journal=journal, interrupt_on_handoff=True, decisions=Approver())
    result = await swarm.run("refund", session_id="s", deps={"db": Database("x")})
    assert result.stop_reason == "final_output"
    assert [(p.kind, p.target) for p in asked] == [("handoff", "billing")]
    replayed = await _swarm(ScriptedModel(), interrupt_on_handoff=True).replay(
        "s", journal, deps={"db": Database("x")}
    )
    assert replayed.trail == ("triage", "billing")
    assert len(asked) == 1


async def test_a_mirror_receives_every_record_once_when_the_run_ends() -> None:
    """A mirror gets the run's records at its end, with no lease and no per-step writes."""
    batches: list[list[JournalRecord]] = []

    class Mirror:
        async def append(self, records: Any) -> None:
            batches.append(list(records))

    result = await _swarm(_script()).run(
        "refund", session_id="s", mirror=Mirror(), deps={"db": Database("x")}
    )
    assert len(batches) == 1
    assert [r.seq for r in batches[0]] == list(range(len(batches[0])))
    assert batches[0][0].kind == "run_started"
    assert batches[0][-1].data["stop_reason"] == result.stop_reason


async def test_a_journal_and_a_mirror_together_are_refused() -> None:
    """One durability boundary per run."""
    with pytest.raises(ConfigurationError, match="not both"):
        await _swarm(_script(), journal=InMemoryJournal()).run("refund", mirror=InMemoryJournal())


async def test_a_run_result_round_trips_through_json() -> None:
    """to_data/from_data give an equal result, the error as its type and message."""
    result = await _swarm(_script()).run("refund", deps={"db": Database("x")})
    again = RunResult.from_data(json.loads(json.dumps(result.to_data())))
    assert again == result


async def test_a_failed_result_carries_its_error_as_data() -> None:
    """A run ended by a model error crosses a process boundary as type name and message."""

    class Broken:
        async def respond(self, request: ModelRequest) -> ModelResponse:
            raise ModelError("the server said no", model="m", attempts=1)

    result = await Swarm([Agent(name="a")], "a", model=Broken()).run("hi")
    data = json.loads(json.dumps(result.to_data()))
    assert data["failure"] == {"type": "ModelError", "message": "the server said no"}
    back = RunResult.from_data(data)
    assert back.error is None
    assert back.failure == result.failure


async def test_every_event_round_trips_through_json() -> None:
    """event_to_data/event_from_data give each event back, the last with its result."""
    events: list[Event] = []
    async with aclosing(_swarm(_script()).stream("refund", deps={"db": Database("x")})) as stream:
        async for event in stream:
            events.append(event)
    again = [event_from_data(json.loads(json.dumps(event_to_data(e)))) for e in events]
    assert again == events


def test_tool_outcomes_round_trip_with_their_error_kind() -> None:
    """The codec keeps whether the arguments or the tool failed."""
    context = RunContext(context={}, agent="a", session_id="s")
    bad_arguments = asyncio.run(explode.invoke('{"order": 1}', context))
    failed = asyncio.run(explode.invoke('{"order": "A-1"}', context))
    for outcome, kind in ((bad_arguments, ToolArgumentsError), (failed, ToolExecutionError)):
        back = outcome_from_data(json.loads(json.dumps(outcome_to_data(outcome))))
        assert isinstance(back, ToolOutcome)
        assert isinstance(back.error, kind)
        assert (back.content, back.is_error) == (outcome.content, True)


def test_a_run_context_round_trips_with_its_payload_class() -> None:
    """The payload's class is named in the data; deps are handed again, never serialised."""
    context = RunContext(
        context={"tier": "gold"},
        agent="billing",
        session_id="s",
        payload=Refund(amount=5),
        deps=object(),
        idempotency_key="s:1:c",
    )
    data = json.loads(json.dumps(context_to_data(context)))
    assert "deps" not in data
    back = context_from_data(data, deps="again")
    assert back.payload == Refund(amount=5)
    assert (back.deps, back.idempotency_key, back.context) == ("again", "s:1:c", {"tier": "gold"})


@pytest.mark.parametrize(
    "value", [object(), b"\xff", {1, 2}, float("nan")], ids=["object", "bytes", "set", "nan"]
)
async def test_a_context_that_is_not_json_points_to_deps(value: object) -> None:
    """With or without a journal, a non-JSON context value is refused before any call."""
    for journal in (None, InMemoryJournal()):
        with pytest.raises(ConfigurationError, match="deps="):
            await _swarm(ScriptedModel(), journal=journal).run("x", context={"db": value})


async def test_deps_reach_tools_after_a_resume_and_are_never_journaled() -> None:
    """A secret in deps is used by the tool and absent from every record."""
    journal = InMemoryJournal()
    swarm = _swarm(_script(), journal=journal, interrupt_before=["billing"])
    paused = await swarm.run("refund", session_id="s", deps={"db": Database("main")})
    assert paused.stop_reason == "interrupted"
    model = ScriptedModel(tool_call("lookup", order="A-1"), text("ok"))
    swarm = _swarm(model, journal=journal, interrupt_before=["billing"])
    result = await swarm.resume("s", decision=approve(), deps={"db": Database("main")})
    assert "via main" in str(result.messages[-2])
    assert "sk-live-123" not in export_jsonl(await journal.read("s"))


async def test_an_invalid_edit_is_refused_and_the_session_keeps_waiting() -> None:
    """A bad edit raises before anything is written; a corrected one is then accepted."""
    journal = InMemoryJournal()
    model = ScriptedModel(transfer("billing", amount=5))
    await _swarm(model, journal=journal, interrupt_on_handoff=True).run("r", session_id="s")
    before = await journal.read("s")
    swarm = _swarm(ScriptedModel(text("done")), journal=journal, interrupt_on_handoff=True)
    with pytest.raises(HandoffPayloadError, match="still waits"):
        await swarm.resume("s", decision=edit(payload={"amount": "lots"}))
    assert await journal.read("s") == before
    result = await swarm.resume("s", decision=edit(payload={"amount": 7}))
    assert result.handoffs[0].payload == {"amount": 7}


async def test_a_stream_left_with_break_journals_its_steps_and_can_resume() -> None:
    """Leaving a stream with a plain break (no aclosing) keeps the session resumable."""
    journal = InMemoryJournal()
    swarm = _swarm(_script(), journal=journal)
    stream = swarm.stream("refund", session_id="s", deps={"db": Database("x")})
    async for event in stream:
        if event.kind == "tool_resulted":
            break
    del stream  # the caller drops the generator, as a function returning early does
    # The event loop closes a dropped generator in a task it schedules: let it run.
    await asyncio.sleep(0)
    await asyncio.gather(*asyncio.all_tasks() - {asyncio.current_task()})
    kinds = [r.kind for r in await journal.read("s")]
    assert "tool_call" in kinds
    resumed = await _swarm(ScriptedModel(text("Refunded.")), journal=journal).resume(
        "s", deps={"db": Database("x")}
    )
    assert resumed.final_output == "Refunded."


async def test_a_failed_append_stops_the_run_and_nothing_more_is_written() -> None:
    """A journal write that fails is never dropped: the run raises JournalError."""

    class Full(InMemoryJournal):
        async def append(self, records: Any) -> None:
            if any(r.kind == "tool_call" for r in records):
                raise OSError(28, "No space left on device")
            await super().append(records)

    journal = Full()
    with pytest.raises(JournalError, match="No space left") as caught:
        await _swarm(_script(), journal=journal).run(
            "refund", session_id="s", deps={"db": Database("d")}
        )
    assert isinstance(caught.value.__cause__, OSError)
    kinds = [r.kind for r in await journal.read("s")]
    assert "tool_call" not in kinds
    assert kinds[-1] == "model_call"
